// Operating a fleet: `acia fleet status` shows the database's health, who holds which run since when,
// the task jobs (active, stuck on a worker that stopped answering), workers alive, stale, gone or
// stopped (and forgets them after a retention) and the budgets; `acia worker` stops gracefully on
// SIGTERM; `acia cancel --db` stops runs however far they got.
import { describe, expect, it } from 'vitest';
import { acia, tempDir } from './helpers.js';
import { expectCleanError, startAcia, zeroLatencyScript } from './cli-helpers.js';
import { useFleet, type FleetHarness, fleetAvailable, type Turn } from './fleet-harness.js';
import type { FleetStatus } from '../../src/fleet/status.js';

let fleet: FleetHarness;

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
    expect(during.workers).toEqual([expect.objectContaining({ name: 'ops-1', state: 'alive', running: 1, tasks: 1, dbErrors: 0, lastOutage: null })]);
    expect(during.leases).toEqual([expect.objectContaining({ runId: first, worker: 'ops-1' })]);
    // t1 is a task job on the worker's task slot; the run's budget has the PM's call settled.
    expect(during.taskJobs).toMatchObject({ queued: 0, active: 1, retrying: 0, failed: 0, expired: 0, stuck: [] });
    expect(during.budgets).toEqual([expect.objectContaining({ runId: first, status: 'running', maxCostUsd: null, reservedUsd: expect.any(Number) as unknown })]);
    expect(during.budgets![0]!.spentUsd).toBeGreaterThan(0);
    expect(during.database).toMatchObject({ owner: true, role: 'acia', maxConnections: expect.any(Number) as unknown });
    expect(during.database.latencyMs).toBeLessThan(5_000);
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
    // A worker that stopped beating without saying goodbye (killed, cut off) shows as stale, then gone; a
    // task job left active on a gone worker shows as stuck.
    await fleet.db.query("INSERT INTO acia_workers (name, concurrency, seen_at) VALUES ('vanished', 2, now() - interval '1 minute'), ('ghost', 1, now() - interval '10 minutes')");
    const stuckJob = (
      await fleet.db.query<{ id: string }>(
        `INSERT INTO pgboss.job (name, data, state, started_on) VALUES ('acia-tasks', $1, 'active', now() - interval '9 minutes') RETURNING id::text AS id`,
        [JSON.stringify({ runId: first, taskId: 't9', epoch: 1, token: 1 })],
      )
    ).rows[0]!.id;
    await fleet.db.query("INSERT INTO acia_task_jobs (job_id, run_id, task_id, worker) VALUES ($1, $2, 't9', 'ghost')", [stuckJob, first]);
    // As pg-boss's maintenance leaves a task job that outlived its expiry.
    await fleet.db.query(`INSERT INTO pgboss.job (name, data, state, output) VALUES ('acia-tasks', '{}', 'failed', '{"value":{"message":"job failed by timeout in active state"}}')`);
    const quiet = fleetStatus();
    expect(quiet.workers.find((w) => w.name === 'vanished')).toMatchObject({ state: 'stale', alive: false });
    expect(quiet.workers.find((w) => w.name === 'ghost')).toMatchObject({ state: 'gone', alive: false });
    expect(quiet.taskJobs).toMatchObject({ expired: 1, failed: 0 });
    expect(quiet.taskJobs?.stuck).toEqual([expect.objectContaining({ jobId: stuckJob, runId: first, taskId: 't9', worker: 'ghost' })]);
    const quietText = acia(['fleet', 'status', '--db', fleet.url]).stdout;
    expect(quietText).toMatch(/vanished\s+stale\s+0\/2 running, 0 task\(s\), last seen 6\d+s ago/);
    expect(quietText).toMatch(/ghost\s+gone\s+/);
    expect(quietText).toMatch(new RegExp(`stuck: ${stuckJob} \\(${first} task t9\\) active 5\\d\\ds on ghost, which stopped answering`));
    expect(quietText).toMatch(/^database: PostgreSQL \d+/m);
    await fleet.db.query("DELETE FROM acia_workers WHERE name = 'vanished'");
    // Silent for two days: the next worker to start forgets it (test 2); the stuck job of a run that
    // ended is cancelled by it too.
    await fleet.db.query("INSERT INTO acia_workers (name, concurrency, seen_at) VALUES ('ancient', 1, now() - interval '2 days')");
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
    // What test 1 left for it: a worker silent for two days is forgotten, a task job of an ended run cancelled.
    await fleet.until('the worker to tidy up', () => /forgot worker\(s\) silent for over 24 h: ancient/.test(fleet.logs.get('ops-c')!) && /cancelled 1 task job\(s\) whose hand-out was superseded/.test(fleet.logs.get('ops-c')!), 30_000);
    expect(fleetStatus().workers.map((w) => w.name)).not.toContain('ancient');
    expect(fleetStatus().taskJobs).toMatchObject({ stuck: [], cancelled: 1 });
    await fleet.until('a run to wait for a human', async () => (await fleet.runRow(waiting))?.status === 'awaiting_human', 60_000);
    const running = fleet.submit('happy', remote, stuck).runId;
    await fleet.until('t1 to start', () => fleet.taskStarted(running), 60_000);
    // Queued behind the stuck run on the worker's only run slot: cancelled before any worker begins it.
    const queued = fleet.submit('happy', remote, zeroLatency).runId;
    const never = acia(['cancel', queued, '--db', fleet.url]);
    expect(never.code, never.stderr).toBe(0);
    expect(never.stdout).toContain(`cancelled ${queued} before it started`);

    // Followed from the database while it runs, whichever workers write to it; it ends with the run.
    const follow = startAcia(['logs', running, '--db', fleet.url, '--follow']);
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
    const followed = await follow.done;
    expect(followed.code, followed.stderr).toBe(0);
    expect(followed.stdout).toMatch(/^\d\d:\d\d team\s+t1 started \(dev\.implement, attempt 1, on worker ops-c\)$/m);
    expect(followed.stdout).toMatch(/^\d\d:\d\d human\s+cancel requested by acia \(fleet\)/m);
    expect(followed.stdout.trimEnd().split('\n').at(-1)).toMatch(/team\s+run cancelled: cancelled by acia; it stopped at its next safe point$/);
    expect(acia(['logs', running, '--db', fleet.url]).stdout).toBe(followed.stdout);
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
