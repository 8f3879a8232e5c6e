// The fleet's shared budget on a real PostgreSQL: gates on separate pools (as separate workers would
// have) reserving and settling on one run at once never pass its limit together; a dead worker's
// reservation expires; a takeover re-derives the spend from the ledger; and inside the team, a breach
// the gate reports stops the run through the same budget_exceeded escalation a local breach does.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { mkdtempSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPgLedger } from '../../src/core/ledger/pg-ledger.js';
import { openFleet } from '../../src/fleet/fleet-db.js';
import { migrateBudgets, openRunBudget, PgBudgetGate, readRunBudget } from '../../src/fleet/budget-gate.js';
import type { BudgetReservation } from '../../src/team/budget.js';
import type { TeamDeps } from '../../src/team/deps.js';
import { postgresBin, startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { runPlanInProcess, scriptedHuman } from '../team/inprocess.js';

let server: TestPostgres;
let admin: pg.Pool;
const pools: pg.Pool[] = [];

/** A worker's own connection pool: gates never share one, as workers on other machines would not. */
function pool(url = server.url): pg.Pool {
  const p = new pg.Pool({ connectionString: url, max: 2 });
  // A pool whose connection is cut under it (the outage test) must not crash the suite; queries still fail.
  p.on('error', () => undefined);
  pools.push(p);
  return p;
}

if (postgresBin() === null && process.env.ACIA_TEST_REQUIRE_POSTGRES === '1') throw new Error('ACIA_TEST_REQUIRE_POSTGRES=1 but no PostgreSQL server binaries under /usr/lib/postgresql');

beforeAll(async () => {
  if (postgresBin() === null) return;
  server = await startPostgres();
  // The fleet's own schema (ledger, runs, workers' heartbeats), as a worker finds it.
  const fleet = await openFleet(server.url, { queue: false });
  await fleet.close();
  admin = pool();
  await migrateBudgets(admin);
}, 60_000);
afterAll(async () => {
  for (const p of pools) await p.end().catch(() => undefined);
  server?.stop();
});
beforeEach(async () => {
  await admin?.query('DELETE FROM acia_budgets');
});

describe.skipIf(postgresBin() === null)('the fleet-wide budget gate on PostgreSQL', () => {
  it('4 workers hammering reserve/settle on one run never pass its cost limit together', async () => {
    const runId = 'run-hammer';
    const limit = 1;
    await openRunBudget(admin, runId, { maxCostUsd: limit }, { worker: 'opener' });
    const settled: number[] = [];
    const breaches: number[] = [];
    let overSeen = 0;
    let done = false;
    // Reads spent + reserved in one statement while the workers run: the invariant holds at every moment.
    const monitor = (async () => {
      const p = pool();
      while (!done) {
        const b = await readRunBudget(p, runId);
        if (b && b.spent.usd + b.reserved.usd > limit + 1e-9) overSeen++;
      }
    })();
    const worker = async (n: number) => {
      const gate = new PgBudgetGate(pool(), { worker: `w${n}` });
      let refused = 0;
      for (let i = 0; i < 300 && refused < 6; i++) {
        const usd = 0.001 + Math.random() * 0.019;
        const r = await gate.reserve(runId, { usd, tokens: Math.ceil(Math.random() * 4000) }, { enforce: true });
        if ('breach' in r) {
          expect(r.breach.limit).toBe('cost');
          expect(r.breach.spent).toBeGreaterThan(limit);
          refused++;
          breaches.push(n);
          continue;
        }
        await new Promise((done) => setTimeout(done, Math.random() * 4));
        // Some calls fail (nothing charged); the others cost at most what was reserved, as estimates do.
        if (Math.random() < 0.15) {
          await gate.release(r.reservation);
        } else {
          const actual = usd * (0.3 + 0.7 * Math.random());
          await gate.settle(r.reservation, { usd: actual, tokens: 100 });
          settled.push(actual);
        }
      }
    };
    await Promise.all([0, 1, 2, 3].map(worker));
    done = true;
    await monitor;

    const b = (await readRunBudget(admin, runId))!;
    const sum = settled.reduce((a, x) => a + x, 0);
    expect(overSeen).toBe(0);
    expect(b.spent.usd).toBeLessThanOrEqual(limit);
    // No settlement was lost to a race: the database's spend is exactly what the workers settled.
    expect(b.spent.usd).toBeCloseTo(sum, 9);
    expect(b.reserved.count).toBe(0);
    // The gate let work through up to the limit (the last refusals came with at most 3 others' estimates held).
    expect(b.spent.usd).toBeGreaterThan(limit - 4 * 0.02);
    expect(new Set(breaches).size).toBe(4);
  }, 60_000);

  it('refuses by tokens too, and a dead worker’s reservation expires and is dropped on the next reserve', async () => {
    const runId = 'run-expiry';
    await openRunBudget(admin, runId, { maxCostUsd: 1, maxTokens: 10_000 }, { worker: 'opener' });
    const dying = new PgBudgetGate(pool(), { worker: 'dying', ttlSeconds: 1 });
    const alive = new PgBudgetGate(pool(), { worker: 'alive' });
    const held = await dying.reserve(runId, { usd: 0.9, tokens: 1000 }, { enforce: true });
    expect('reservation' in held).toBe(true);
    // The dying worker never settles: its 0.9 is held, so 0.2 more would pass the limit.
    const refused = await alive.reserve(runId, { usd: 0.2, tokens: 1000 }, { enforce: true });
    expect(refused).toEqual({ breach: { limit: 'cost', spent: expect.closeTo(1.1, 9) as number, max: 1, inFlight: 0.9 } });
    expect(await alive.reserve(runId, { usd: 0.01, tokens: 9500 }, { enforce: true })).toEqual({ breach: { limit: 'tokens', spent: 10_500, max: 10_000, inFlight: 1000 } });
    await new Promise((done) => setTimeout(done, 1500));
    const granted = await alive.reserve(runId, { usd: 0.2, tokens: 1000 }, { enforce: true });
    expect('reservation' in granted).toBe(true);
    const b = (await readRunBudget(admin, runId))!;
    expect(b.reserved).toEqual({ usd: 0.2, tokens: 1000, count: 1 });
    // A call that was in flight when its reservation expired still counts once it is settled: it was paid for.
    await dying.settle((held as { reservation: BudgetReservation }).reservation, { usd: 0.5, tokens: 800 });
    expect((await readRunBudget(admin, runId))!.spent).toEqual({ usd: 0.5, tokens: 800, costKnown: true });
  }, 30_000);

  it('a reply reporting negative or broken usage is charged at its reservation, never credited', async () => {
    const runId = 'run-hostile-usage';
    const gate = await openRunBudget(admin, runId, { maxCostUsd: 1, maxTokens: 1000 }, { worker: 'w' });
    const a = (await gate.reserve(runId, { usd: 0.3, tokens: 200 }, { enforce: true })) as { reservation: BudgetReservation };
    await gate.settle(a.reservation, { usd: -5, tokens: -1_000_000 });
    const b = (await gate.reserve(runId, { usd: 0.1, tokens: 100 }, { enforce: true })) as { reservation: BudgetReservation };
    await gate.settle(b.reservation, { usd: Number.NaN, tokens: Number.POSITIVE_INFINITY });
    expect((await readRunBudget(admin, runId))!.spent).toEqual({ usd: expect.closeTo(0.4, 9) as number, tokens: 300, costKnown: true });
  });

  it('a retry after a commit whose answer was lost neither reserves nor charges twice', async () => {
    const runId = 'run-lost-answer';
    await openRunBudget(admin, runId, { maxCostUsd: 1 }, { worker: 'opener' });
    // Every operation runs once, then again as if the first attempt's COMMIT answer never arrived.
    const twice = async <T>(op: (attempt: number) => Promise<T>): Promise<T> => {
      await op(0);
      return op(1);
    };
    const gate = new PgBudgetGate(pool(), { worker: 'w', retry: twice });
    const r = (await gate.reserve(runId, { usd: 0.6, tokens: 10 }, { enforce: true })) as { reservation: BudgetReservation };
    expect((await readRunBudget(admin, runId))!.reserved).toEqual({ usd: 0.6, tokens: 10, count: 1 });
    await gate.settle(r.reservation, { usd: 0.5, tokens: 10 });
    expect((await readRunBudget(admin, runId))!).toMatchObject({ spent: { usd: 0.5, tokens: 10 }, reserved: { count: 0 } });
  });

  it('waits out a database that is away for a moment instead of failing the call', async () => {
    const runId = 'run-outage';
    await openRunBudget(admin, runId, { maxCostUsd: 1 }, { worker: 'opener' });
    // The worker reaches PostgreSQL through a port that refuses connections until the "restart" is over.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const a = probe.address() as AddressInfo;
        probe.close(() => resolve(a.port));
      });
    });
    const target = new URL(server.url);
    const gate = new PgBudgetGate(pool(`postgres://acia@127.0.0.1:${port}/postgres`), { worker: 'w' });
    const pending = gate.reserve(runId, { usd: 0.1, tokens: 1 }, { enforce: true });
    await new Promise((r) => setTimeout(r, 1200));
    const forwarder = createServer((s) => s.pipe(connect(Number(target.port), '127.0.0.1')).pipe(s)).listen(port, '127.0.0.1');
    try {
      const r = await pending;
      expect('reservation' in r).toBe(true);
      expect((await readRunBudget(admin, runId))!.reserved.count).toBe(1);
    } finally {
      await pools.pop()!.end();
      forwarder.close();
    }
  }, 30_000);

  it('a waived budget never refuses but still counts the calls', async () => {
    const runId = 'run-waived';
    const gate = await openRunBudget(admin, runId, { maxCostUsd: 0.1 }, { worker: 'w' });
    expect('breach' in (await gate.reserve(runId, { usd: 0.5, tokens: 10 }, { enforce: true }))).toBe(true);
    const r = await gate.reserve(runId, { usd: 0.5, tokens: 10 }, { enforce: false });
    if (!('reservation' in r)) throw new Error('a waived reservation was refused');
    await gate.settle(r.reservation, { usd: 0.4, tokens: 10 });
    expect((await readRunBudget(admin, runId))!.spent.usd).toBeCloseTo(0.4, 9);
  });

  it('a takeover re-derives the spend from the ledger and drops the reservations of dead workers', async () => {
    const runId = '20261123-000000-bbbbbb';
    const clock = { now: () => new Date() };
    const ledger = await openPgLedger(admin, runId, { clock, create: true, dir: mkdtempSync(join(tmpdir(), 'acia-budget-')) });
    const ref = await ledger.putBlob('{}');
    const call = (costUsd: number | null, inputTokens: number) =>
      ledger.append({
        actor: 'dev:t1',
        type: 'LLM_CALL',
        data: { caller: 'dev:t1', model: 'm', requestHash: ref, responseRef: ref, usage: { inputTokens, outputTokens: 5, cacheReadTokens: 1, cacheWriteTokens: 0 }, costUsd, stopReason: 'end_turn', durationMs: 1 },
      });
    await call(0.1, 100);
    await call(0.25, 200);
    await ledger.close();
    // What a worker that died had in the table: a settled call it never recorded, and two calls in flight.
    const first = await openRunBudget(admin, runId, { maxCostUsd: 1 }, { worker: 'old' });
    const old = await first.reserve(runId, { usd: 0.3, tokens: 1 }, { enforce: true });
    await first.settle((await first.reserve(runId, { usd: 0.2, tokens: 1 }, { enforce: true }) as { reservation: BudgetReservation }).reservation, { usd: 0.2, tokens: 1 });
    const other = new PgBudgetGate(pool(), { worker: 'peer' });
    await other.reserve(runId, { usd: 0.05, tokens: 1 }, { enforce: true });
    expect('reservation' in old).toBe(true);
    await admin.query("INSERT INTO acia_workers (name, concurrency, seen_at) VALUES ('old', 1, now() - interval '1 minute'), ('peer', 1, now())");

    await openRunBudget(admin, runId, { maxCostUsd: 2, maxTokens: 50_000 }, { worker: 'new' });
    const b = (await readRunBudget(admin, runId))!;
    expect(b.limits).toEqual({ maxCostUsd: 2, maxTokens: 50_000 });
    expect(b.spent.usd).toBeCloseTo(0.35, 9);
    expect(b.spent.tokens).toBe(100 + 5 + 1 + 200 + 5 + 1);
    // The peer's heartbeat is fresh: its call may still be running, so its reservation stays.
    expect(b.reserved).toEqual({ usd: 0.05, tokens: 1, count: 1 });

    await admin.query('DELETE FROM acia_ledger WHERE run_id = $1', [runId]);
    await admin.query('DELETE FROM acia_workers');
  });
});

describe.skipIf(postgresBin() === null)('the team with a shared budget gate', () => {
  const plan = {
    tasks: [
      { id: 'd1', capability: 'dev.implement' as const },
      { id: 'd2', capability: 'dev.implement' as const },
      { id: 'd3', capability: 'dev.implement' as const },
    ],
    edges: [
      { from: 'd1', to: 'd2' },
      { from: 'd2', to: 'd3' },
    ],
    joins: [],
  };
  const runId = '20260102-030405-abcdef';
  // Each call is budgeted at 100 tokens and costs 20 (the in-process model's usage).
  const withGate = (gate: PgBudgetGate, maxTokens: number) => (deps: TeamDeps) => {
    deps.budgetGate = gate;
    deps.config = { ...deps.config, budget: { maxTokens } };
    deps.estimate = () => ({ usd: null, tokens: 100 });
  };

  it('stops the run through the budget_exceeded escalation when another worker spent the shared budget', async () => {
    const gate = await openRunBudget(admin, runId, { maxTokens: 1000 }, { worker: 'me' });
    // Another worker of the same run spends 850 of the 1000 tokens; this process's own fold never sees it.
    const peer = new PgBudgetGate(pool(), { worker: 'peer' });
    const r = await peer.reserve(runId, { usd: null, tokens: 850 }, { enforce: true });
    await peer.settle((r as { reservation: BudgetReservation }).reservation, { usd: null, tokens: 850 });

    const { result, entries } = await runPlanInProcess(plan, { tweak: withGate(gate, 1000) });
    expect(result.reason, result.message).toBe('budget_exhausted');
    const breach = entries.find((e) => e.type === 'BUDGET_EXCEEDED')?.data as { limit: string; spent: number; max: number };
    expect(breach.limit).toBe('tokens');
    expect(breach.max).toBe(1000);
    expect(entries.find((e) => e.type === 'ESCALATION_REQUESTED')?.data).toMatchObject({ reason: 'budget_exceeded', options: ['approve', 'abort'] });
    const calls = entries.filter((e) => e.type === 'LLM_CALL').length;
    const b = (await readRunBudget(admin, runId))!;
    expect(b.spent.tokens).toBe(850 + 20 * calls);
    expect(b.spent.tokens + 100).toBeGreaterThan(1000);
    expect(b.reserved.count).toBe(0);
  }, 30_000);

  it('a human who approves waives it: the run goes on, and its calls are still counted in the database', async () => {
    const gate = await openRunBudget(admin, runId, { maxTokens: 150 }, { worker: 'me' });
    const { result, entries } = await runPlanInProcess(plan, { tweak: withGate(gate, 150), human: scriptedHuman([{ action: 'approve' }]) });
    expect(result.reason, result.message).toBe('succeeded');
    expect(entries.filter((e) => e.type === 'BUDGET_EXCEEDED')).toHaveLength(1);
    const calls = entries.filter((e) => e.type === 'LLM_CALL').length;
    const b = (await readRunBudget(admin, runId))!;
    expect(b.spent.tokens).toBe(20 * calls);
    // Past the limit: the calls after the approval were let through and counted.
    expect(b.spent.tokens + 100).toBeGreaterThan(150);
    expect(b.reserved.count).toBe(0);
  }, 30_000);
});
