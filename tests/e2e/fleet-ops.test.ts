// Operating a fleet: `acia fleet status` shows who holds which run since when, and `acia worker` stops
// gracefully on SIGTERM: it finishes the run in hand, takes no new one, and leaves marked as stopped.
import { describe, expect, it } from 'vitest';
import { acia, tempDir } from './helpers.js';
import { expectCleanError, zeroLatencyScript } from './cli-helpers.js';
import { useFleet, type FleetHarness, fleetAvailable, type Turn } from './fleet-harness.js';

let fleet: FleetHarness;

interface FleetStatus {
  workers: { name: string; state: string; alive: boolean; running: number }[];
  queued: number;
  leases: { runId: string; worker: string; since: string | null; heldSeconds: number | null }[];
}
const fleetStatus = (): FleetStatus => {
  const r = acia(['fleet', 'status', '--db', fleet.url, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as FleetStatus;
};

const zeroLatency = (turns: Turn[]) => {
  for (const t of turns) t.latencyMs = 0;
};

describe.skipIf(!fleetAvailable())('fleet operations', () => {
  useFleet((f) => (fleet = f), { killWorkersAfterEach: true });

  it('fleet status shows the lease; SIGTERM finishes the run in hand, takes no new one, and the worker shows as stopped', async () => {
    const remote = fleet.remote('ops');
    const slow = (turns: Turn[]) => {
      zeroLatency(turns);
      turns.find((t) => t.caller === 'dev:t1')!.latencyMs = 6000;
    };
    const first = fleet.submit('happy', remote, slow).runId;
    const worker = fleet.startWorker('ops-1', { concurrency: 1 });
    const log = () => fleet.logs.get('ops-1')!;
    const exited = new Promise<number | null>((resolve) => worker.on('exit', (code) => resolve(code)));

    await fleet.until('t1 to start', () => fleet.taskStarted(first), 30_000);
    const during = fleetStatus();
    expect(during.workers).toEqual([expect.objectContaining({ name: 'ops-1', state: 'alive', running: 1 })]);
    expect(during.leases).toEqual([expect.objectContaining({ runId: first, worker: 'ops-1' })]);
    expect(Date.now() - Date.parse(during.leases[0]!.since!)).toBeLessThan(60_000);
    const text = acia(['fleet', 'status', '--db', fleet.url]);
    expect(text.stdout).toMatch(new RegExp(`${first}\\s+held by ops-1 since \\S+`));
    expect(text.stdout).toMatch(/ops-1\s+alive\s+1\/1 running/);

    // Mid-task: SIGTERM. A second run queued now must not be taken by the stopping worker.
    worker.kill('SIGTERM');
    const second = fleet.submit('happy', remote, slow).runId;
    expect(await exited, log()).toBe(0);
    const rows = await fleet.runRows([first, second]);
    expect(rows.get(first), log()).toMatchObject({ status: 'succeeded', worker: 'ops-1' });
    expect(rows.get(second)?.status).toBe('queued');
    const after = fleetStatus();
    expect(after.workers).toEqual([expect.objectContaining({ name: 'ops-1', state: 'stopped', alive: false, running: 0 })]);
    expect(after.leases).toEqual([]);
    expect(after.queued).toBe(1);
    expect(log()).toContain('stopping after the runs in hand');
    // A worker that stopped beating without saying goodbye (killed, cut off) shows as stale.
    await fleet.db.query("INSERT INTO acia_workers (name, concurrency, seen_at) VALUES ('vanished', 2, now() - interval '1 minute')");
    expect(fleetStatus().workers.find((w) => w.name === 'vanished')).toMatchObject({ state: 'stale', alive: false });
    expect(acia(['fleet', 'status', '--db', fleet.url]).stdout).toMatch(/vanished\s+stale\s+0\/2 running, last seen 6\d+s ago/);
    await fleet.db.query("DELETE FROM acia_workers WHERE name = 'vanished'");
    // Done with: the second run's job leaves the queue, or the next test's worker would run it (a slow
    // run) before getting to the job that test is about.
    await fleet.db.query("DELETE FROM pgboss.job WHERE data->>'runId' = $1", [second]);
  }, 180_000);

  it('acia cancel --db: a running run stops at its next safe point (its task job withdrawn), a queued one never starts, a waiting one is closed', async () => {
    const remote = fleet.remote('ops-cancel');
    const stuck = (turns: Turn[]) => {
      zeroLatency(turns);
      turns.find((t) => t.caller === 'dev:t1')!.latencyMs = 600_000;
    };
    const waiting = fleet.submit('escalate', remote, zeroLatency).runId;
    fleet.startWorker('ops-c', { concurrency: 1 });
    await fleet.until('a run to wait for a human', async () => (await fleet.runRow(waiting))?.status === 'awaiting_human', 60_000);
    const running = fleet.submit('happy', remote, stuck).runId;
    await fleet.until('t1 to start', () => fleet.taskStarted(running), 60_000);
    // Queued behind the stuck run on the worker's only run slot: cancelled before any worker begins it.
    const queued = fleet.submit('happy', remote, zeroLatency).runId;
    const never = acia(['cancel', queued, '--db', fleet.url]);
    expect(never.code, never.stderr).toBe(0);
    expect(never.stdout).toContain(`cancelled ${queued} before it started`);

    const stop = acia(['cancel', running, '--db', fleet.url, '--timeout', '60'], { env: { ACIA_DATABASE_URL: fleet.url } });
    expect(stop.code, stop.stdout + stop.stderr + fleet.log.slice(-2000)).toBe(0);
    expect(stop.stdout).toContain(`cancelled ${running}: it stopped at its next safe point`);
    const closed = acia(['cancel', waiting, '--db'], { env: { ACIA_DATABASE_URL: fleet.url } });
    expect(closed.code, closed.stdout + closed.stderr).toBe(0);
    expect(closed.stdout).toContain(`cancelled ${waiting}`);

    for (const [runId, wasRunning] of [[running, true], [waiting, false]] as const) {
      const rows = await fleet.rows(runId);
      expect(rows.at(-2), runId).toMatchObject({ type: 'CANCEL_REQUESTED', data: { via: 'fleet', wasRunning } });
      expect(rows.at(-1), runId).toMatchObject({ type: 'RUN_COMPLETED', data: { reason: 'cancelled' } });
      expect((await fleet.runRow(runId))?.status).toBe('cancelled');
      expect(acia(['verify', runId, '--db', fleet.url]).code, runId).toBe(0);
      expectCleanError(acia(['resume', runId, '--db', fleet.url]), 2, /was cancelled; it cannot be resumed/);
    }
    // The aborted Dev agent merged nothing, and its task job is no longer waiting for anyone.
    expect((await fleet.rows(running)).some((r) => r.type === 'MERGE' || r.type === 'TASK_COMPLETED')).toBe(false);
    const tasks = await fleet.db.query<{ state: string }>("SELECT state FROM pgboss.job WHERE name = 'acia-tasks' AND data->>'runId' = $1", [running]);
    expect(tasks.rows.map((r) => r.state)).not.toContain('active');
    // The queued run's job reaches the worker once its slot is free, and is dropped: it never starts.
    await fleet.until('the cancelled run’s job to be dropped', () => fleet.logs.get('ops-c')!.includes(`${queued}: ended, or held by a live worker`), 30_000);
    expect((await fleet.rows(queued)).length).toBe(0);
    expect((await fleet.runRow(queued))?.status).toBe('cancelled');
    expectCleanError(acia(['cancel', queued, '--db', fleet.url]), 2, /is already cancelled/);
  }, 120_000);

  it('a job re-delivered for a run another live worker holds (its job expired under a long run) is dropped, not run twice', async () => {
    const db = fleet.db;
    const beat = setInterval(() => void db.query("UPDATE acia_workers SET seen_at = now() WHERE name = 'busy-elsewhere'").catch(() => undefined), 1000);
    try {
      await db.query("INSERT INTO acia_workers (name, concurrency) VALUES ('busy-elsewhere', 1)");
      const remote = fleet.remote('ops-dup');
      const sub = acia(['submit', 'anything', '--repo', remote, '--db', fleet.url, '--json', '--model', `scripted:${zeroLatencyScript('happy', tempDir('ops-dup-script'))}`]);
      expect(sub.code, sub.stderr).toBe(0);
      const runId = (JSON.parse(sub.stdout) as { runId: string }).runId;
      // As if the live worker 'busy-elsewhere' had taken this run and pg-boss handed its job out again.
      await db.query("UPDATE acia_runs SET status = 'running', worker = 'busy-elsewhere' WHERE run_id = $1", [runId]);
      fleet.startWorker('ops-2', { concurrency: 1 });
      const dropped = `${runId}: ended, or held by a live worker; this stale job is dropped`;
      await fleet.until('the stale job to be dropped', () => fleet.logs.get('ops-2')!.includes(dropped), 30_000);
      expect((await db.query('SELECT 1 FROM acia_ledger WHERE run_id = $1', [runId])).rowCount).toBe(0);
      expect((await db.query('SELECT status, worker FROM acia_runs WHERE run_id = $1', [runId])).rows[0]).toEqual({ status: 'running', worker: 'busy-elsewhere' });
    } finally {
      clearInterval(beat);
    }
    // The stand-in holder stops beating now: the next test's worker would reap this run as lost and run it
    // in its only slot before the run that test is about. It was never meant to run.
    await fleet.db.query("UPDATE acia_runs SET status = 'aborted' WHERE worker = 'busy-elsewhere'");
    await fleet.db.query("DELETE FROM acia_workers WHERE name = 'busy-elsewhere'");
  }, 60_000);

  it('a run marked as held by a live worker that does not hold it (its failure lost in an outage) is queued again and finishes', async () => {
    const db = fleet.db;
    const remote = fleet.remote('ops-orphan');
    const runId = fleet.submit('happy', remote, zeroLatency).runId;
    // As a long outage leaves it: the row says ops-3 runs it, and its job is stuck active with nobody on it.
    await db.query("UPDATE acia_runs SET status = 'running', worker = 'ops-3' WHERE run_id = $1", [runId]);
    await db.query("UPDATE pgboss.job SET state = 'active', started_on = now() WHERE data->>'runId' = $1", [runId]);
    fleet.startWorker('ops-3', { concurrency: 1 });
    const row = await fleet.settled([runId], 50_000, (s) => s === 'succeeded').then(
      (rows) => rows.get(runId),
      () => fleet.runRow(runId),
    );
    expect(row && { status: row.status, worker: row.worker }, fleet.logs.get('ops-3')).toEqual({ status: 'succeeded', worker: 'ops-3' });
    expect(fleet.logs.get('ops-3')).toContain(`${runId} was marked as held here but is not; queued again`);
  }, 60_000);
});
