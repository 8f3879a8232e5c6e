// A run the database says this worker holds, but the worker does not: after a long database outage the
// run's failure may never have been recorded (its status stayed `running`, its job stayed active), and
// since the worker still beats no reaper would ever requeue it. Each worker checks its own rows and
// puts such runs back on the queue (their stale job cancelled), as the reaper does for dead workers.
import { retryTransient } from '../core/ledger/pg-retry.js';
import { RUN_QUEUE, type Fleet } from './fleet-db.js';
import { enqueue, jobOfRow, type RunRowForJob } from './submit.js';

export const ORPHAN_CHECK_MS = 5_000;

/** Requeues the runs marked `running` on `worker` that it does not hold; returns their ids. */
export async function requeueOrphans(fleet: Fleet, worker: string, holding: ReadonlySet<string>): Promise<string[]> {
  const rows = (
    await fleet.db.query<RunRowForJob & { job_id: string | null; updated_at: string }>("SELECT run_id, job_id, goal, repo_url, base, job, updated_at::text AS updated_at FROM acia_runs WHERE worker = $1 AND status = 'running'", [worker])
  ).rows.filter((r) => !holding.has(r.run_id));
  const out: string[] = [];
  for (const r of rows) {
    // Only if the row is unchanged since it was read: a run this worker (or another) took in between
    // has a newer updated_at, and is left alone.
    const took = await fleet.db.query(
      "UPDATE acia_runs SET status = 'queued', worker = NULL, message = 'its worker lost track of it (a database outage); queued again', updated_at = now() WHERE run_id = $1 AND worker = $2 AND status = 'running' AND updated_at::text = $3",
      [r.run_id, worker, r.updated_at],
    );
    if (took.rowCount === 0) continue;
    if (r.job_id) await fleet.boss.cancel(RUN_QUEUE, r.job_id).catch(() => undefined);
    await retryTransient(() => enqueue(fleet.boss, jobOfRow(r)));
    out.push(r.run_id);
  }
  return out;
}

export function startOrphanCheck(fleet: Fleet, worker: string, holding: ReadonlySet<string>, log: (line: string) => void): { stop(): void } {
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    requeueOrphans(fleet, worker, holding)
      .then((ids) => ids.forEach((id) => log(`worker ${worker}: ${id} was marked as held here but is not; queued again`)))
      .catch(() => undefined)
      .finally(() => (busy = false));
  }, ORPHAN_CHECK_MS);
  return { stop: () => clearInterval(timer) };
}
