// The fenced PgLedger on a real PostgreSQL: many writers of one run's chain (an orchestrator and its
// task workers) under one lease epoch, and what a takeover does to a writer of an older epoch or an
// older task hand-out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migrateLedger, openPgLedger } from '../../../src/core/ledger/pg-ledger.js';
import { takeLease } from '../../../src/core/ledger/pg-lease.js';
import { checkLedgerChain } from '../../../src/core/ledger/check-chain.js';
import { postgresBin, startPostgres, type TestPostgres } from '../../helpers/postgres.js';

let server: TestPostgres;
let db: pg.Pool;
const clock = { now: () => new Date() };
const dir = () => mkdtempSync(join(tmpdir(), 'acia-pgfence-'));
let n = 0;
const newRun = () => `20261123-000000-${(++n).toString(16).padStart(6, '0')}`;
const note = (pid: number) => ({ actor: 'team', type: 'RUN_RESUMED' as const, data: { pid } });

if (postgresBin() === null && process.env.ACIA_TEST_REQUIRE_POSTGRES === '1') throw new Error('ACIA_TEST_REQUIRE_POSTGRES=1 but no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)');

describe.skipIf(postgresBin() === null)('the fenced PostgreSQL ledger', () => {
  beforeAll(async () => {
    server = await startPostgres();
    db = new pg.Pool({ connectionString: server.url });
    await migrateLedger(db);
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    server?.stop();
  });

  it('writers of one epoch share the chain: each append seals on the true tail and sees the others', async () => {
    const runId = newRun();
    const epoch = await takeLease(db, runId, '', 'orchestrator');
    const orchestrator = await openPgLedger(db, runId, { clock, create: true, dir: dir(), fence: { epoch } });
    await orchestrator.append(note(1));
    const token = await takeLease(db, runId, 't1', 'orchestrator');
    const task = await openPgLedger(db, runId, { clock, create: false, dir: dir(), fence: { epoch, task: { taskId: 't1', token } } });
    // Interleaved and concurrent: neither writer's tail is current when it appends.
    await Promise.all([task.append(note(2)), orchestrator.append(note(3)), task.append(note(4)), orchestrator.append(note(5))]);
    await orchestrator.refresh!();
    expect(orchestrator.entries().map((e) => e.seq)).toEqual([0, 1, 2, 3, 4]);
    const rows = await db.query<{ line: string; epoch: string }>('SELECT line, epoch FROM acia_ledger WHERE run_id = $1 ORDER BY seq', [runId]);
    expect(rows.rows.map((r) => Number(r.epoch))).toEqual([1, 1, 1, 1, 1]);
    expect(checkLedgerChain(rows.rows.map((r) => JSON.parse(r.line) as unknown))).toEqual([]);
    // The orchestrator's view is the database's, entry for entry.
    expect(orchestrator.entries().map((e) => e.hash)).toEqual(rows.rows.map((r) => (JSON.parse(r.line) as { hash: string }).hash));
  });

  it('a takeover fences the older epoch: its appends are refused, and so is every later one', async () => {
    const runId = newRun();
    const first = await takeLease(db, runId, '', 'w1');
    const old = await openPgLedger(db, runId, { clock, create: true, dir: dir(), fence: { epoch: first } });
    await old.append(note(1));
    const second = await takeLease(db, runId, '', 'w2');
    expect(second).toBe(first + 1);
    const now = await openPgLedger(db, runId, { clock, create: false, dir: dir(), fence: { epoch: second } });
    await expect(old.append(note(2))).rejects.toMatchObject({ code: 'LEDGER_FENCED' });
    await now.append(note(3));
    await expect(old.append(note(4))).rejects.toMatchObject({ code: 'LEDGER_FENCED' });
    // A writer of the old epoch cannot even open the run again.
    await expect(openPgLedger(db, runId, { clock, create: false, dir: dir(), fence: { epoch: first } })).rejects.toMatchObject({ code: 'LEDGER_FENCED' });
    const rows = await db.query<{ seq: number; epoch: string }>('SELECT seq, epoch FROM acia_ledger WHERE run_id = $1 ORDER BY seq', [runId]);
    expect(rows.rows.map((r) => [r.seq, Number(r.epoch)])).toEqual([
      [0, 1],
      [1, 2],
    ]);
  });

  it("a task handed out again fences the earlier hand-out's writer, not the orchestrator", async () => {
    const runId = newRun();
    const epoch = await takeLease(db, runId, '', 'orchestrator');
    const orchestrator = await openPgLedger(db, runId, { clock, create: true, dir: dir(), fence: { epoch } });
    await orchestrator.append(note(1));
    const lost = await openPgLedger(db, runId, { clock, create: false, dir: dir(), fence: { epoch, task: { taskId: 't1', token: await takeLease(db, runId, 't1', 'orchestrator') } } });
    await lost.append(note(2));
    const again = await takeLease(db, runId, 't1', 'orchestrator');
    const rescuer = await openPgLedger(db, runId, { clock, create: false, dir: dir(), fence: { epoch, task: { taskId: 't1', token: again } } });
    await expect(lost.append(note(3))).rejects.toThrow(/task t1 was handed to another worker/);
    await rescuer.append(note(4));
    await orchestrator.append(note(5));
    expect((await db.query('SELECT 1 FROM acia_ledger WHERE run_id = $1', [runId])).rowCount).toBe(4);
  });

  it('an append whose answer was lost after it committed is adopted when it is sent again, not appended twice', async () => {
    const runId = newRun();
    const epoch = await takeLease(db, runId, '', 'w1');
    // The first fenced append reaches the server and commits; its answer is lost as if the connection dropped.
    let lose = true;
    const lossy = new Proxy(db, {
      get(target, prop, receiver) {
        if (prop !== 'query') return Reflect.get(target, prop, receiver) as unknown;
        return async (...args: unknown[]) => {
          const r = await (target.query as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          if (lose && typeof args[0] === 'string' && args[0].includes('acia_append_fenced')) {
            lose = false;
            throw new Error('Connection terminated unexpectedly');
          }
          return r;
        };
      },
    });
    const ledger = await openPgLedger(lossy, runId, { clock, create: true, dir: dir(), fence: { epoch } });
    const first = await ledger.append(note(1));
    expect(lose).toBe(false);
    await ledger.append(note(2));
    const rows = await db.query<{ line: string }>('SELECT line FROM acia_ledger WHERE run_id = $1 ORDER BY seq', [runId]);
    expect(rows.rows.map((r) => (JSON.parse(r.line) as { seq: number; hash: string }).hash)).toEqual(ledger.entries().map((e) => e.hash));
    expect(ledger.entries().map((e) => e.seq)).toEqual([0, 1]);
    expect(ledger.entries()[0]!.hash).toBe(first.hash);
    expect(checkLedgerChain(rows.rows.map((r) => JSON.parse(r.line) as unknown))).toEqual([]);
  });
});
