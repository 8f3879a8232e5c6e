// A fleet run's --max-cost-usd through the built CLI: four real `acia worker` processes, runs whose
// every model call reserves its estimate in the database. A run stops with budget_exhausted before
// the call that would pass the limit, the database's spend is its ledger's, and `acia resume --answer
// approve --db` waives the budget: a worker resumes it (re-deriving the spend from the ledger) to the end.
// Four dev tasks calling at once, handed out as task jobs to several of the four workers, are held to
// the limit together.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acia } from './helpers.js';
import { useFleet, type FleetHarness, editedScript, fleetAvailable, scenarioOf } from './fleet-harness.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';

// Each call of the happy script costs $0.003-0.007 and is budgeted at ~$0.086 (a full 8192-token reply):
// the third call would pass $0.095; the whole run costs ~$0.03.
const LIMIT = 0.095;
let fleet: FleetHarness;

/** The run's status once `done` accepts it (or whatever it is when `timeoutMs` ran out). */
async function waitForStatus(runId: string, done: (status: string) => boolean, timeoutMs: number): Promise<string> {
  await fleet.settled([runId], timeoutMs, done).catch(() => undefined);
  return (await fleet.runRow(runId))?.status ?? 'missing';
}

function exported(runId: string, name: string): { type: string; actor: string; data: Record<string, unknown> }[] {
  const out = fleet.exportAndVerify(runId, name);
  return readFileSync(join(out, '.acia', 'runs', runId, 'ledger.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type: string; actor: string; data: Record<string, unknown> });
}

const ledgerCost = (entries: ReturnType<typeof exported>) => entries.filter((e) => e.type === 'LLM_CALL').reduce((a, e) => a + (e.data.costUsd as number), 0);

/** Submits demo scenario `name` with --max-cost-usd `limit`, its script's latencies set by `latency`. */
function submit(name: string, limit: number, latency: (caller: string) => number): string {
  const remote = fleet.remote(`fleet-budget-${name}`);
  const s = scenarioOf(name);
  const file = editedScript(name, (turns) => {
    for (const t of turns) t.latencyMs = latency(t.caller);
  });
  const args = ['submit', s.goal, '--repo', remote, '--base', 'main', '--db', fleet.url, '--json', '--model', `scripted:${file}`, '--max-cost-usd', String(limit)];
  args.push('--test-command', s.settings.testCommand, '--parallel', String(s.settings.parallel), '--sandbox', sandboxAvailable() ? 'auto' : 'off');
  const sub = acia(args);
  expect(sub.code, sub.stderr).toBe(0);
  return (JSON.parse(sub.stdout) as { runId: string }).runId;
}

function startWorkers(): void {
  if (fleet.workers.size > 0) return;
  for (const name of ['b1', 'b2', 'b3', 'b4']) fleet.startWorker(name, { concurrency: 1 });
}

async function budgetRow(runId: string): Promise<{ max_cost_usd: number; spent_usd: number; reservations: number }> {
  const r = await fleet.db.query<{ max_cost_usd: number; spent_usd: number; reservations: string }>(
    'SELECT max_cost_usd, spent_usd, (SELECT count(*) FROM acia_budget_reservations r WHERE r.run_id = b.run_id) AS reservations FROM acia_budgets b WHERE run_id = $1',
    [runId],
  );
  const row = r.rows[0]!;
  return { ...row, reservations: Number(row.reservations) };
}

describe.skipIf(!fleetAvailable())('a fleet run’s budget in the database', () => {
  useFleet((f) => (fleet = f));

  it('4 workers: the run stops before passing --max-cost-usd, and a human’s approve waives it', async () => {
    const runId = submit('happy', LIMIT, () => 0);
    startWorkers();
    expect(await waitForStatus(runId, (st) => !['queued', 'running'].includes(st), 120_000), fleet.log).toBe('budget_exhausted');
    const stopped = exported(runId, 'fleet-budget-stopped');
    const breach = stopped.find((e) => e.type === 'BUDGET_EXCEEDED')!.data as { limit: string; spent: number; max: number };
    expect(breach).toMatchObject({ limit: 'cost', max: LIMIT });
    expect(breach.spent).toBeGreaterThan(LIMIT);
    expect(ledgerCost(stopped)).toBeLessThanOrEqual(LIMIT);
    expect(stopped.find((e) => e.type === 'ESCALATION_REQUESTED')?.data).toMatchObject({ reason: 'budget_exceeded' });
    // The limit came from the submitted --max-cost-usd; what the database counted is what the ledger holds.
    const row = await budgetRow(runId);
    expect(row.max_cost_usd).toBe(LIMIT);
    expect(row.spent_usd).toBeCloseTo(ledgerCost(stopped), 9);
    expect(row.reservations).toBe(0);

    const answered = acia(['resume', runId, '--answer', 'approve', '--db', fleet.url]);
    expect(answered.code, answered.stderr).toBe(0);
    expect(await waitForStatus(runId, (st) => !['queued', 'running', 'budget_exhausted'].includes(st), 120_000), fleet.log).toBe('succeeded');
    const finished = exported(runId, 'fleet-budget-finished');
    expect(finished.find((e) => e.type === 'HUMAN_RESPONSE')?.data.action).toBe('approve');
    expect(finished.filter((e) => e.type === 'LLM_CALL').length).toBeGreaterThan(stopped.filter((e) => e.type === 'LLM_CALL').length);
    expect((await budgetRow(runId)).spent_usd).toBeCloseTo(ledgerCost(finished), 9);
  }, 240_000);

  it('four dev tasks calling at once are held to --max-cost-usd together: the calls in flight count', async () => {
    // Three estimates of ~$0.086 at once pass $0.20 although the whole run costs ~$0.1 (so alone, one
    // call's estimate never would): a call made while others are under way is refused, and the run stops
    // without ever having passed the limit. Dev replies are slow so that the tasks' calls overlap.
    const limit = 0.2;
    const runId = submit('parallel', limit, (caller) => (caller.startsWith('dev:') ? 1000 : 0));
    startWorkers();
    expect(await waitForStatus(runId, (st) => !['queued', 'running'].includes(st), 120_000), fleet.log).toBe('budget_exhausted');
    const entries = exported(runId, 'fleet-budget-parallel');
    expect(ledgerCost(entries)).toBeLessThanOrEqual(limit);
    const breach = entries.find((e) => e.type === 'BUDGET_EXCEEDED')!.data as { limit: string; spent: number; max: number; inFlight?: number };
    expect(breach).toMatchObject({ limit: 'cost', max: limit });
    expect(breach.spent).toBeGreaterThan(limit);
    // What made it pass: the other tasks' calls under way (at least one full estimate), not what was spent.
    expect(breach.inFlight).toBeGreaterThan(0.08);
    // Several dev tasks were under way together when the limit was reached.
    expect(new Set(entries.filter((e) => e.type === 'TASK_STARTED').map((e) => e.data.taskId)).size).toBeGreaterThanOrEqual(3);
    // ... on more than one worker: the budget held across processes, not inside one.
    const devWorkers = new Set(entries.filter((e) => e.type === 'TASK_STARTED' && String(e.data.capability).startsWith('dev.')).map((e) => e.data.worker));
    expect(devWorkers.size, JSON.stringify([...devWorkers])).toBeGreaterThanOrEqual(2);
    const row = await budgetRow(runId);
    expect(row.spent_usd).toBeCloseTo(ledgerCost(entries), 9);
    expect(row.reservations).toBe(0);
  }, 180_000);
});
