// `acia submit`: a run for the fleet. The repository travels as a git URL and a base commit; the
// run waits in the queue until a worker takes it. The run's row belongs to the role that inserted it
// (tenancy.ts): only that role (and the fleet's owner) sees, answers or resumes it. The queue itself is
// the owner's: a session of the owner's role enqueues directly, a submitter's role marks its row as
// requested and the workers turn the request into a job (dispatch.ts).
import { randomIds, systemClock } from '../core/acm/ids.js';
import { AciaError } from '../core/errors.js';
import type { FleetClient } from './fleet-db.js';
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

/** A run's row as the job is built from it: the columns, never ids or fields from the stored JSON. */
export interface RunRowForJob {
  run_id: string;
  goal: string;
  repo_url: string;
  base: string;
  job: { settings?: unknown } | null;
  answer?: string | null;
}

/**
 * The job for a run, from its row. The row is its submitter's to write, so the job takes the run id and
 * repository from the row's own columns (a job is always for the row it came from); the worker checks
 * the rest against its policy.
 */
export function jobOfRow(row: RunRowForJob): RunJob {
  const settings = row.job?.settings;
  const answer = row.answer ?? undefined;
  return {
    runId: row.run_id,
    goal: row.goal,
    repoUrl: row.repo_url,
    base: row.base,
    settings: typeof settings === 'object' && settings !== null && !Array.isArray(settings) ? (settings as Record<string, unknown>) : {},
    ...(answer === undefined ? {} : { answer }),
  };
}

/** The channel a submitter's request is announced on: the workers' dispatchers LISTEN. */
export const REQUEST_CHANNEL = 'acia_run_requests';

export async function submitRun(fleet: FleetClient, o: Omit<RunJob, 'runId'> & { label?: string }): Promise<string> {
  const runId = randomIds.runId(systemClock.now());
  const job: RunJob = { runId, goal: o.goal, repoUrl: o.repoUrl, base: o.base, settings: o.settings };
  // The submitter column is left to its default, current_user: the database says who submitted, not the client.
  await fleet.db.query('INSERT INTO acia_runs (run_id, goal, repo_url, base, status, job, submitter_label, requested_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)', [
    runId,
    o.goal,
    o.repoUrl,
    o.base,
    'queued',
    JSON.stringify(job),
    o.label ?? null,
    fleet.boss ? null : new Date(),
  ]);
  if (fleet.boss) await enqueue(fleet.boss, job);
  else await announceRequest(fleet);
  return runId;
}

/**
 * `acia resume <runId> --answer ... --db`: a run that waits for a human holds no worker; the answer
 * goes into a new job for it, and whichever worker takes it resumes the run from its ledger. Another
 * submitter's run is not found: row-level security hides it.
 */
export async function answerRun(fleet: FleetClient, runId: string, answer: string | undefined): Promise<void> {
  const row = (await fleet.db.query<RunRowForJob & { status: string }>('SELECT run_id, goal, repo_url, base, job, status FROM acia_runs WHERE run_id = $1', [runId])).rows[0];
  if (!row) throw new AciaError('RUN_NOT_FOUND', `no fleet run ${runId} that you submitted`, { hint: 'a fleet run belongs to the database role that submitted it; list yours with `acia runs --db ...`' });
  if (row.status === 'cancelled') throw new AciaError('RUN_FINISHED', `fleet run ${runId} was cancelled; it cannot be resumed`, { hint: `see it with \`acia show ${runId} --db\`` });
  // With no answer: a run that stopped on an error (its remote refused a push, the database stayed away)
  // goes on from its ledger once the cause is fixed, as `acia resume` continues a local one.
  if (answer === undefined && row.status !== 'error') throw new AciaError('USAGE', `fleet run ${runId} is ${row.status}; only a run that stopped on an error resumes without --answer`);
  // A run stopped by its budget waits for an answer too (`--answer approve` waives it), as a local one does.
  if (answer !== undefined && row.status !== 'awaiting_human' && row.status !== 'budget_exhausted') throw new AciaError('USAGE', `fleet run ${runId} is ${row.status}, not waiting for an answer`);
  if (fleet.boss) {
    await fleet.db.query('UPDATE acia_runs SET status = $2, message = NULL, updated_at = now() WHERE run_id = $1', [runId, 'queued']);
    await enqueue(fleet.boss, jobOfRow({ ...row, answer: answer ?? null }));
    return;
  }
  await fleet.db.query('UPDATE acia_runs SET status = $2, message = NULL, answer = $3, requested_at = now(), updated_at = now() WHERE run_id = $1', [runId, 'queued', answer ?? null]);
  await announceRequest(fleet);
}

export async function enqueue(boss: FleetClient['boss'] & object, job: RunJob): Promise<void> {
  // One job per run at a time (singletonKey); a job whose worker dies expires and is retried by another.
  const id = await boss.send(RUN_QUEUE, job, { singletonKey: job.runId, retryLimit: 2, retryDelay: 1, expireInSeconds: 3600 });
  if (id === null) throw new AciaError('USAGE', `fleet run ${job.runId} is already queued or running`);
}

async function announceRequest(fleet: FleetClient): Promise<void> {
  // Lost or unheard (no worker listening), the request still waits in its row for the next sweep.
  await fleet.db.query(`NOTIFY ${REQUEST_CHANNEL}`).catch(() => undefined);
}
