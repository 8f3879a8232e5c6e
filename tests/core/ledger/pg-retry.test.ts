// Which database errors a fleet worker waits out, and how long: a restart is ridden out, a real error
// (a constraint, bad SQL, a refused login) fails at once, and an outage longer than the tolerance fails.
import { describe, expect, it } from 'vitest';
import { isTransientDbError, retryTransient } from '../../../src/core/ledger/pg-retry.js';

const err = (props: { code?: string; message?: string }) => Object.assign(new Error(props.message ?? 'x'), props);

describe('isTransientDbError', () => {
  it('connection loss and server restarts are transient', () => {
    for (const e of [err({ code: 'ECONNREFUSED' }), err({ code: 'ECONNRESET' }), err({ code: '57P01' }), err({ code: '57P03' }), err({ code: '08006' }), err({ message: 'Connection terminated unexpectedly' })]) {
      expect(isTransientDbError(e), String((e as { code?: string }).code ?? e.message)).toBe(true);
    }
  });
  it('answers from the server about the query are not', () => {
    for (const e of [err({ code: '23505' }), err({ code: '42P01' }), err({ code: '28P01', message: 'connection error?' }), err({ message: 'boom' }), null, 'ECONNREFUSED']) {
      expect(isTransientDbError(e)).toBe(false);
    }
  });
});

describe('retryTransient', () => {
  const clock = () => {
    let t = 0;
    return { now: () => t, sleep: (ms: number) => Promise.resolve(void (t += ms)) };
  };

  it('retries transient errors until the operation succeeds, passing the attempt number', async () => {
    const seen: number[] = [];
    const r = await retryTransient((attempt) => {
      seen.push(attempt);
      return attempt < 3 ? Promise.reject(err({ code: 'ECONNREFUSED' })) : Promise.resolve('ok');
    }, clock());
    expect(r).toBe('ok');
    expect(seen).toEqual([0, 1, 2, 3]);
  });

  it('throws a non-transient error at once', async () => {
    let calls = 0;
    await expect(
      retryTransient(() => {
        calls++;
        return Promise.reject(err({ code: '23505', message: 'duplicate key' }));
      }, clock()),
    ).rejects.toThrow('duplicate key');
    expect(calls).toBe(1);
  });

  it('gives up after the tolerance with the last error', async () => {
    const c = clock();
    let calls = 0;
    await expect(
      retryTransient(() => {
        calls++;
        return Promise.reject(err({ code: '57P03', message: 'the database system is starting up' }));
      }, { ...c, toleranceMs: 10_000 }),
    ).rejects.toThrow('starting up');
    expect(c.now()).toBeGreaterThanOrEqual(10_000);
    expect(calls).toBeGreaterThan(3);
  });
});
