// `acia worker`: takes runs and tasks from the fleet's queues. A run is run like `acia run` would, with
// three differences: the ledger is the run's rows in PostgreSQL behind a lease epoch (a fencing token
// taken when the worker takes the run), the repository is a clone of the submitted URL at the
// submitted base, and every checkpoint and merge is pushed back to that remote as it happens. The
// run's dev tasks go to the task queue, where any worker (this one included) takes them. A run whose
// worker died resumes on another worker from its ledger and branches; a worker that was only cut off
// is fenced out by the new epoch.
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { hostname } from 'node:os';
import type PgBoss from 'pg-boss';
import { systemClock } from '../core/acm/ids.js';
import { errorMessage, isAciaError } from '../core/errors.js';
import { takeLease } from '../core/ledger/pg-lease.js';
import { Git } from '../team/git.js';
import { resumeRun, startRun, type RunResult } from '../team/team.js';
import { RUN_QUEUE, setRunStatus, TASK_QUEUE, type Fleet } from './fleet-db.js';
import { startHeartbeat, LEASE_SECONDS } from './liveness.js';
import { jobDeps, type JobDeps } from './job-deps.js';
import { checkoutJob } from './repo-cache.js';
import { listenForTaskJobs } from './wakeup.js';
import type { RunJob } from './submit.js';
import { runTaskJob, taskDispatcher, type TaskJob } from './task-jobs.js';

export interface WorkerOptions {
  /** Runs this worker orchestrates at once. */
  concurrency: number;
  /** Task jobs (any run's dev tasks) at once beside them; default `concurrency`, 0 for none. */
  taskConcurrency?: number;
  /** Where runs' clones live on this machine. */
  cacheDir: string;
  env: NodeJS.ProcessEnv;
  name?: string;
  log: (line: string) => void;
}

export interface RunningWorker {
  name: string;
  /** Finishes the runs in hand, takes no new ones. */
  stop(): Promise<void>;
}

export async function startWorker(fleet: Fleet, o: WorkerOptions): Promise<RunningWorker> {
  const name = o.name ?? `${hostname()}:${process.pid}`;
  const heartbeat = await startHeartbeat(fleet, name, o.concurrency, o.log);
  const runsInHand = new Set<Promise<unknown>>();
  const tasksInHand = new Set<Promise<unknown>>();
  const hold = async <T>(set: Set<Promise<unknown>>, work: Promise<T>): Promise<T> => {
    set.add(work);
    try {
      return await work;
    } finally {
      set.delete(work);
    }
  };
  const ids: string[] = [];
  const taskIds: string[] = [];
  for (let i = 0; i < o.concurrency; i++) {
    ids.push(
      await fleet.boss.work<RunJob>(RUN_QUEUE, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async ([job]: PgBoss.Job<RunJob>[]) => {
        if (!job) return;
        try {
          const result = await hold(runsInHand, runJob(fleet, job.data, { ...o, name }));
          if (result === null) return;
          o.log(`${job.data.runId}: ${result.reason} — ${result.message}`);
        } catch (e) {
          // The job fails and pg-boss retries it (another worker may take it); runJob wrote why in the run's row.
          o.log(`${job.data.runId}: ${errorMessage(e)}`);
          throw e;
        }
      }),
    );
  }
  // Task slots beside the run slots: an orchestrator waiting on its tasks must never hold the only slot.
  const taskSlots = o.taskConcurrency ?? o.concurrency;
  for (let i = 0; i < taskSlots; i++) {
    taskIds.push(
      await fleet.boss.work<TaskJob>(TASK_QUEUE, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async ([job]: PgBoss.Job<TaskJob>[]) => {
        if (!job) return;
        return hold(tasksInHand, runTaskJob(fleet, job.id, job.data, { name, cacheDir: o.cacheDir, env: o.env, log: o.log, leaseSeconds: LEASE_SECONDS }));
      }),
    );
  }
  const wakeup = taskSlots > 0 ? await listenForTaskJobs(fleet, () => taskIds.forEach((id) => fleet.boss.notifyWorker(id))) : null;
  o.log(`worker ${name}: taking runs (${o.concurrency} at a time) and tasks (${taskSlots} at a time)`);
  return {
    name,
    stop: async () => {
      // Graceful: the runs in hand finish (their heartbeats go on meanwhile), then the worker leaves.
      // Its task slots stay open until then: a run in hand may be waiting for a task only this worker can take.
      for (const id of ids) await fleet.boss.offWork({ id });
      await Promise.allSettled([...runsInHand]);
      for (const id of taskIds) await fleet.boss.offWork({ id });
      await wakeup?.stop();
      await Promise.allSettled([...tasksInHand]);
      await heartbeat.stop();
    },
  };
}

/**
 * One run on this worker, from a clone; a run the database already has entries for is resumed.
 * Returns null when the run was taken over by another worker meanwhile (this one was fenced out).
 */
export async function runJob(fleet: Fleet, job: RunJob, o: WorkerOptions & { name: string }): Promise<RunResult | null> {
  const git = new Git(systemClock);
  // The fencing token: from here on, whoever took the run before this worker can no longer write to it.
  const epoch = await takeLease(fleet.db, job.runId, '', o.name);
  await setRunStatus(fleet.db, job.runId, { status: 'running', worker: o.name }, epoch);
  const dir = join(o.cacheDir, 'runs', job.runId);
  try {
    const checkout = await checkoutJob(git, { cacheDir: o.cacheDir, repoUrl: job.repoUrl, runId: job.runId, base: job.base, dir });
    const run: JobDeps = await jobDeps(fleet, git, { runId: job.runId, settings: job.settings, checkout, fence: { epoch }, worker: o.name, env: o.env, log: o.log });
    const { deps } = run;
    deps.dispatchTask = taskDispatcher(fleet, job, epoch, { name: o.name, cacheDir: o.cacheDir, env: o.env, log: o.log, leaseSeconds: LEASE_SECONDS }, () => run);
    const local = deps.writeManifest;
    deps.writeManifest = async (d, manifest) => {
      await local(d, manifest);
      await setRunStatus(fleet.db, job.runId, { status: manifest.status, worker: o.name, cost_usd: manifest.costUsd }, epoch);
    };
    // The run's local directory (manifest, wiki pages) in the clone; its ledger is in the database.
    await mkdir(join(dir, '.acia', 'runs', job.runId), { recursive: true });
    const resumed = (await fleet.db.query('SELECT 1 FROM acia_ledger WHERE run_id = $1 LIMIT 1', [job.runId])).rowCount !== 0;
    const result = resumed ? await resumeRun(deps, { dir, runId: job.runId, ...(job.answer === undefined ? {} : { answer: job.answer }) }) : await startRun(deps, { dir, goal: job.goal });
    // A run whose last entries were refused ends on that error: the new owner decides how it ends.
    if (result.errorCode === 'LEDGER_FENCED') {
      o.log(`${job.runId}: dropped: another worker took the run over (${result.message})`);
      return null;
    }
    await setRunStatus(fleet.db, job.runId, { status: result.reason, message: result.message, cost_usd: result.costUsd, run_branch: result.runBranch, head_commit: result.headCommit }, epoch);
    return result;
  } catch (e) {
    if (isAciaError(e) && e.code === 'LEDGER_FENCED') {
      o.log(`${job.runId}: dropped: ${e.message}`);
      return null;
    }
    // Only while this worker still holds the run: a worker that lost it never writes over the new owner's row.
    await setRunStatus(fleet.db, job.runId, { status: 'error', worker: o.name, message: errorMessage(e) }, epoch).catch(() => undefined);
    throw e;
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
