// Which workers are alive, and what happens to the runs of one that is not. Each worker writes a
// heartbeat every few seconds; every worker also reaps: a run still `running` on a worker whose
// heartbeat is older than the lease goes back to the queue (its old job cancelled), and the next
// worker resumes it from its ledger and pushed branches. The PgLedger's (run, seq) key makes sure a
// worker that was only cut off, not dead, cannot add to the chain once the run moved on.
import { connectGuarded } from '../core/ledger/pg-retry.js';
import type { Fleet } from './fleet-db.js';
import { RUN_QUEUE } from './fleet-db.js';
import { enqueue, jobOfRow, type RunJob, type RunRowForJob } from './submit.js';

export const HEARTBEAT_MS = 2_000;
export const LEASE_SECONDS = 10;

/** Resolves after the first heartbeat is written, so no reaper mistakes this worker's first run for an orphan. */
export async function startHeartbeat(fleet: Fleet, name: string, concurrency: number, log: (line: string) => void): Promise<{ stop(): Promise<void> }> {
  const beat = () =>
    fleet.db.query(
      `INSERT INTO acia_workers (name, concurrency) VALUES ($1, $2)
       ON CONFLICT (name) DO UPDATE SET seen_at = now(), concurrency = $2, stopped = false`,
      [name, concurrency],
    );
  let busy = false;
  // When this worker last found the database answering after it did not (or started). Right after an
  // outage every heartbeat in the table is stale, live workers' included, until they beat again: a
  // worker reaps only once it has seen the database up for a whole lease, so it never requeues the runs
  // of a worker that was only waiting for the database, as it was.
  let upSince: number | null = Date.now();
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      await beat();
      upSince ??= Date.now();
      if (Date.now() - upSince < LEASE_SECONDS * 1000) return;
      for (const runId of await reapRuns(fleet)) log(`worker ${name}: ${runId} lost its worker; queued again`);
    } catch {
      // The database is away for a moment (a restart): the next tick tries again.
      upSince = null;
    } finally {
      busy = false;
    }
  };
  await beat();
  const timer = setInterval(() => void tick(), HEARTBEAT_MS);
  return {
    stop: async () => {
      clearInterval(timer);
      await fleet.db.query('UPDATE acia_workers SET stopped = true, seen_at = now() WHERE name = $1', [name]).catch(() => undefined);
    },
  };
}

/** Requeues runs whose worker's lease ran out; returns their ids. One reaper wins each run (row locks). */
export async function reapRuns(fleet: Fleet): Promise<string[]> {
  const client = await connectGuarded(fleet.db);
  const reaped: { runId: string; jobId: string | null; job: RunJob }[] = [];
  try {
    await client.query('BEGIN');
    const rows = await client.query<RunRowForJob & { job_id: string | null }>(
      `SELECT r.run_id, r.job_id, r.goal, r.repo_url, r.base, r.job FROM acia_runs r LEFT JOIN acia_workers w ON w.name = r.worker
       WHERE r.status = 'running' AND (w.name IS NULL OR w.seen_at < now() - make_interval(secs => $1))
       FOR UPDATE OF r SKIP LOCKED`,
      [LEASE_SECONDS],
    );
    for (const r of rows.rows) {
      await client.query(`UPDATE acia_runs SET status = 'queued', worker = NULL, message = 'its worker stopped answering; queued again', updated_at = now() WHERE run_id = $1`, [r.run_id]);
      reaped.push({ runId: r.run_id, jobId: r.job_id, job: jobOfRow(r) });
    }
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
  for (const r of reaped) {
    if (r.jobId) await fleet.boss.cancel(RUN_QUEUE, r.jobId).catch(() => undefined);
    await enqueue(fleet.boss, r.job);
  }
  return reaped.map((r) => r.runId);
}
