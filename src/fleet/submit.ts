// `acia submit`: a run for the fleet. The repository travels as a git URL and a base commit; the
// run waits in the queue until a worker takes it.
import { randomIds, systemClock } from '../core/acm/ids.js';
import { AciaError } from '../core/errors.js';
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
  /** Set when a human's answer re-enqueues a run that waited for one. */
  answer?: string;
}

export async function submitRun(fleet: Fleet, o: Omit<RunJob, 'runId'>): Promise<string> {
  const runId = randomIds.runId(systemClock.now());
  const job: RunJob = { runId, ...o };
  await fleet.db.query('INSERT INTO acia_runs (run_id, goal, repo_url, base, status, job) VALUES ($1, $2, $3, $4, $5, $6)', [runId, o.goal, o.repoUrl, o.base, 'queued', JSON.stringify(job)]);
  await enqueue(fleet, job);
  return runId;
}

/**
 * `acia resume <runId> --answer ... --db`: a run that waits for a human holds no worker; the answer
 * goes into a new job for it, and whichever worker takes it resumes the run from its ledger.
 */
export async function answerRun(fleet: Fleet, runId: string, answer: string | undefined): Promise<void> {
  const row = (await fleet.db.query<{ status: string; job: RunJob }>('SELECT status, job FROM acia_runs WHERE run_id = $1', [runId])).rows[0];
  if (!row) throw new AciaError('RUN_NOT_FOUND', `no fleet run ${runId}`, { hint: 'list them with `acia runs --db ...`' });
  // With no answer: a run that stopped on an error (its remote refused a push, the database stayed away)
  // goes on from its ledger once the cause is fixed, as `acia resume` continues a local one.
  if (answer === undefined && row.status !== 'error') throw new AciaError('USAGE', `fleet run ${runId} is ${row.status}; only a run that stopped on an error resumes without --answer`);
  // A run stopped by its budget waits for an answer too (`--answer approve` waives it), as a local one does.
  if (answer !== undefined && row.status !== 'awaiting_human' && row.status !== 'budget_exhausted') throw new AciaError('USAGE', `fleet run ${runId} is ${row.status}, not waiting for an answer`);
  await fleet.db.query('UPDATE acia_runs SET status = $2, message = NULL, updated_at = now() WHERE run_id = $1', [runId, 'queued']);
  await enqueue(fleet, answer === undefined ? row.job : { ...row.job, answer });
}

export async function enqueue(fleet: Fleet, job: RunJob): Promise<void> {
  // One job per run at a time (singletonKey); a job whose worker dies expires and is retried by another.
  const id = await fleet.boss.send(RUN_QUEUE, job, { singletonKey: job.runId, retryLimit: 2, retryDelay: 1, expireInSeconds: 3600 });
  if (id === null) throw new AciaError('USAGE', `fleet run ${job.runId} is already queued or running`);
}
