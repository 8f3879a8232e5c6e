// Which workers are alive, and what happens to the runs of one that is not. Each worker writes a
// heartbeat every few seconds; every worker also reaps: a run still `running` on a worker whose
// heartbeat is older than the lease goes back to the queue (its old job cancelled), and the next
// worker resumes it from its ledger and pushed branches. The PgLedger's (run, seq) key makes sure a
// worker that was only cut off, not dead, cannot add to the chain once the run moved on. Every so often
// a worker also tidies what dead workers leave: task jobs whose hand-out was superseded (cancelled, not
// left active for their whole expiry) and workers silent past the retention (forgotten).
import { connectGuarded, noteTransientDbError, transientDbErrors } from '../core/ledger/pg-retry.js';
import type { Fleet } from './fleet-db.js';
import { RUN_QUEUE, TASK_QUEUE } from './fleet-db.js';
import { enqueue, jobOfRow, type RunJob, type RunRowForJob } from './submit.js';

export const HEARTBEAT_MS = 2_000;
export const LEASE_SECONDS = 10;
/** A worker silent this long is gone (its runs were requeued long ago); `acia fleet status` says so. */
export const GONE_SECONDS = 300;
/** A gone or stopped worker is forgotten (its row deleted) after this many hours by default. */
export const FORGET_AFTER_HOURS = 24;
/** How often the tidying (superseded task jobs, forgotten workers) runs, in heartbeats. */
const TIDY_EVERY = 15;

export interface HeartbeatOptions {
  /** Hours after which a silent worker's row is deleted (`acia worker --forget-workers-after`). */
  forgetAfterHours?: number;
  /** A database outage this worker rode out: when it began and how long it lasted. */
  onOutage?: (from: Date, ms: number) => void;
}

/** Resolves after the first heartbeat is written, so no reaper mistakes this worker's first run for an orphan. */
export async function startHeartbeat(fleet: Fleet, name: string, concurrency: number, log: (line: string) => void, o: HeartbeatOptions = {}): Promise<{ stop(): Promise<void> }> {
  // The outage this worker last rode out, written with the next beat (the database was away for it).
  let outage: { at: Date; ms: number } | null = null;
  const beat = () =>
    fleet.db.query(
      `INSERT INTO acia_workers (name, concurrency) VALUES ($1, $2)
       ON CONFLICT (name) DO UPDATE SET seen_at = now(), concurrency = $2, stopped = false, db_errors = $3,
         last_outage_at = COALESCE($4, acia_workers.last_outage_at), last_outage_ms = COALESCE($5, acia_workers.last_outage_ms)`,
      [name, concurrency, transientDbErrors(), outage?.at ?? null, outage?.ms ?? null],
    );
  let busy = false;
  let ticks = 0;
  // When this worker last found the database answering after it did not (or started). Right after an
  // outage every heartbeat in the table is stale, live workers' included, until they beat again: a
  // worker reaps only once it has seen the database up for a whole lease, so it never requeues the runs
  // of a worker that was only waiting for the database, as it was.
  let upSince: number | null = Date.now();
  // When the first beat failed, while the database is away.
  let downSince: number | null = null;
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      await beat();
      if (downSince !== null) {
        outage = { at: new Date(downSince), ms: Date.now() - downSince };
        log(`worker ${name}: the database was away for ${(outage.ms / 1000).toFixed(1)} s (from ${outage.at.toISOString()}); carrying on`);
        o.onOutage?.(outage.at, outage.ms);
        downSince = null;
      }
      upSince ??= Date.now();
      if (++ticks % TIDY_EVERY === 0) await tidy(fleet, name, o.forgetAfterHours ?? FORGET_AFTER_HOURS, log);
      if (Date.now() - upSince < LEASE_SECONDS * 1000) return;
      for (const r of await reapRuns(fleet)) log(`worker ${name}: ${r.runId} lost its worker ${r.worker ?? '?'} (silent ${r.silentSeconds ?? '?'} s); queued again for another worker to take over`);
    } catch {
      // The database is away for a moment (a restart): the next tick tries again.
      if (downSince === null) {
        downSince = Date.now();
        log(`worker ${name}: the database does not answer; waiting for it`);
      }
      noteTransientDbError();
      upSince = null;
    } finally {
      busy = false;
    }
  };
  await beat();
  await tidy(fleet, name, o.forgetAfterHours ?? FORGET_AFTER_HOURS, log).catch(() => undefined);
  const timer = setInterval(() => void tick(), HEARTBEAT_MS);
  return {
    stop: async () => {
      clearInterval(timer);
      await fleet.db.query('UPDATE acia_workers SET stopped = true, seen_at = now() WHERE name = $1', [name]).catch(() => undefined);
    },
  };
}

/** What dead workers leave: superseded task jobs are cancelled, long-silent workers forgotten. */
async function tidy(fleet: Fleet, name: string, forgetAfterHours: number, log: (line: string) => void): Promise<void> {
  const superseded = await supersededTaskJobs(fleet);
  if (superseded.length > 0) {
    await fleet.boss.cancel(TASK_QUEUE, superseded);
    log(`worker ${name}: cancelled ${superseded.length} task job(s) whose hand-out was superseded (their run was taken over, handed the task out again, or ended)`);
  }
  const forgotten = await fleet.db.query<{ name: string }>(
    `DELETE FROM acia_workers w WHERE w.seen_at < now() - make_interval(hours => $1)
       AND NOT EXISTS (SELECT 1 FROM acia_runs r WHERE r.worker = w.name AND r.status = 'running') RETURNING w.name`,
    [forgetAfterHours],
  );
  if (forgotten.rows.length > 0) log(`worker ${name}: forgot worker(s) silent for over ${forgetAfterHours} h: ${forgotten.rows.map((r) => r.name).join(', ')}`);
}

/**
 * Task jobs nobody will ever wait for: their run's lease or their task's token moved on (a takeover, a
 * new hand-out), or their run ended. pg-boss would keep an active one for its whole expiry.
 */
export async function supersededTaskJobs(fleet: Pick<Fleet, 'db'>): Promise<string[]> {
  const r = await fleet.db.query<{ id: string }>(
    `SELECT j.id::text AS id FROM pgboss.job j
       LEFT JOIN acia_leases l ON l.run_id = j.data->>'runId' AND l.scope = ''
       LEFT JOIN acia_leases t ON t.run_id = j.data->>'runId' AND t.scope = j.data->>'taskId'
       LEFT JOIN acia_runs r ON r.run_id = j.data->>'runId'
      WHERE j.name = $1 AND j.state IN ('created', 'retry', 'active')
        AND (l.epoch IS DISTINCT FROM (j.data->>'epoch')::bigint OR t.epoch IS DISTINCT FROM (j.data->>'token')::bigint
             OR r.status IS NULL OR r.status NOT IN ('running', 'queued'))`,
    [TASK_QUEUE],
  );
  return r.rows.map((x) => x.id);
}

/** Requeues runs whose worker's lease ran out; returns them. One reaper wins each run (row locks). */
export async function reapRuns(fleet: Fleet): Promise<{ runId: string; worker: string | null; silentSeconds: number | null }[]> {
  const client = await connectGuarded(fleet.db);
  const reaped: { runId: string; worker: string | null; silentSeconds: number | null; jobId: string | null; job: RunJob }[] = [];
  try {
    await client.query('BEGIN');
    const rows = await client.query<RunRowForJob & { job_id: string | null; worker: string | null; silent: number | null }>(
      `SELECT r.run_id, r.job_id, r.goal, r.repo_url, r.base, r.job, r.worker, EXTRACT(EPOCH FROM now() - w.seen_at)::float AS silent
       FROM acia_runs r LEFT JOIN acia_workers w ON w.name = r.worker
       WHERE r.status = 'running' AND (w.name IS NULL OR w.seen_at < now() - make_interval(secs => $1))
       FOR UPDATE OF r SKIP LOCKED`,
      [LEASE_SECONDS],
    );
    for (const r of rows.rows) {
      await client.query(`UPDATE acia_runs SET status = 'queued', worker = NULL, message = 'its worker stopped answering; queued again', updated_at = now() WHERE run_id = $1`, [r.run_id]);
      reaped.push({ runId: r.run_id, worker: r.worker, silentSeconds: r.silent === null ? null : Math.round(r.silent), jobId: r.job_id, job: jobOfRow(r) });
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
  return reaped.map(({ runId, worker, silentSeconds }) => ({ runId, worker, silentSeconds }));
}
