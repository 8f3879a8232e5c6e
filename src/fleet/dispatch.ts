// Submitters' requests become jobs here. A submitter's role has no rights on the queue: `acia submit`
// and `acia resume` mark the submitter's own row as requested (and NOTIFY); every worker listens and
// also sweeps every few seconds, and turns each request into the run's job, built from the row's own
// columns. One job per run at a time (pg-boss's singletonKey): two workers sweeping together send it
// once, and a request that meets a job still under way waits for the next sweep.
import type pg from 'pg';
import { isRunId } from '../core/contain/run-id.js';
import type { Fleet } from './fleet-db.js';
import { RUN_QUEUE } from './fleet-db.js';
import { jobOfRow, REQUEST_CHANNEL, type RunRowForJob } from './submit.js';

const SWEEP_MS = 2_000;

/** Sends a job for every requested run; returns the ids sent. */
export async function dispatchRequests(fleet: Fleet, log: (line: string) => void): Promise<string[]> {
  const rows = await fleet.db.query<RunRowForJob & { requested_at: string }>(
    'SELECT run_id, goal, repo_url, base, job, answer, requested_at::text AS requested_at FROM acia_runs WHERE requested_at IS NOT NULL ORDER BY requested_at LIMIT 100',
  );
  const sent: string[] = [];
  for (const row of rows.rows) {
    // The table's check constraint holds new rows to this; a row from before it is refused here.
    if (!isRunId(row.run_id)) {
      await fleet.db.query("UPDATE acia_runs SET requested_at = NULL, status = 'error', message = 'refused: the run id is not a plain name' WHERE run_id = $1", [row.run_id]);
      continue;
    }
    const id = await fleet.boss.send(RUN_QUEUE, jobOfRow(row), { singletonKey: row.run_id, retryLimit: 2, retryDelay: 1, expireInSeconds: 3600 });
    // null: a job for the run is still under way; the request waits for the next sweep.
    if (id === null) continue;
    // Only the request that was read: one the submitter made since is sent by the next sweep.
    await fleet.db.query('UPDATE acia_runs SET requested_at = NULL, answer = NULL WHERE run_id = $1 AND requested_at::text = $2', [row.run_id, row.requested_at]);
    sent.push(row.run_id);
    log(`${row.run_id}: queued at its submitter's request`);
  }
  return sent;
}

/** Dispatches on every NOTIFY and every sweep until stopped. */
export async function startDispatcher(fleet: Fleet, log: (line: string) => void): Promise<{ stop(): Promise<void> }> {
  let busy = false;
  let again = false;
  const run = (): void => {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    dispatchRequests(fleet, log)
      .catch(() => undefined)
      .finally(() => {
        busy = false;
        if (again) {
          again = false;
          run();
        }
      });
  };
  let client: pg.PoolClient | null = null;
  try {
    client = await fleet.db.connect();
    client.on('notification', run);
    // A broken listener connection is not fatal: the sweep still runs.
    client.on('error', () => undefined);
    await client.query(`LISTEN ${REQUEST_CHANNEL}`);
  } catch {
    client?.release(true);
    client = null;
  }
  const timer = setInterval(run, SWEEP_MS);
  run();
  return {
    stop: async () => {
      clearInterval(timer);
      if (client) {
        await client.query(`UNLISTEN ${REQUEST_CHANNEL}`).catch(() => undefined);
        client.release(true);
      }
    },
  };
}
