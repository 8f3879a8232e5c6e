// `acia submit`: a run for the fleet. The repository travels as a git URL and a base commit; the
// run waits in the queue until a worker takes it.
import { randomIds, systemClock } from '../core/acm/ids.js';
import type { Fleet } from './fleet-db.js';
import { RUN_QUEUE } from './fleet-db.js';

/** What a worker needs to run it: the repository, the base, the goal and the user's settings. */
export interface RunJob {
  runId: string;
  goal: string;
  repoUrl: string;
  base: string;
  /** Config values chosen at submit time (model, parallel, budget, testCommand, sandbox...). */
  settings: Record<string, unknown>;
}

export async function submitRun(fleet: Fleet, o: Omit<RunJob, 'runId'>): Promise<string> {
  const runId = randomIds.runId(systemClock.now());
  await fleet.db.query('INSERT INTO acia_runs (run_id, goal, repo_url, base, status) VALUES ($1, $2, $3, $4, $5)', [runId, o.goal, o.repoUrl, o.base, 'queued']);
  const job: RunJob = { runId, ...o };
  // One job per run (singletonKey); a job whose worker dies expires and is retried by another worker.
  await fleet.boss.send(RUN_QUEUE, job, { singletonKey: runId, retryLimit: 2, retryDelay: 1, expireInSeconds: 3600 });
  return runId;
}
