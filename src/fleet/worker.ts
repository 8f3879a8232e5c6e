// `acia worker`: takes runs and tasks from the fleet's queues. A run is run like `acia run` would, with
// three differences: the ledger is the run's rows in PostgreSQL behind a lease epoch (a fencing token
// taken when the worker takes the run), the repository is a clone of the submitted URL at the
// submitted base, and every checkpoint and merge is pushed back to that remote as it happens. The
// run's dev tasks go to the task queue, where any worker (this one included) takes them. A run whose
// worker died resumes on another worker from its ledger and branches; a worker that was only cut off
// is fenced out by the new epoch.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { hostname } from 'node:os';
import type PgBoss from 'pg-boss';
import { systemClock } from '../core/acm/ids.js';
import { ensureRunDir } from '../core/contain/acia-state.js';
import { errorMessage, isAciaError } from '../core/errors.js';
import { takeLease } from '../core/ledger/pg-lease.js';
import { Git } from '../team/git.js';
import { resumeRun, startRun, type RunResult } from '../team/team.js';
import { RUN_QUEUE, setRunStatus, TASK_QUEUE, type Fleet } from './fleet-db.js';
import { startHeartbeat, LEASE_SECONDS } from './liveness.js';
import { startOrphanCheck } from './orphans.js';
import { retryTransient } from '../core/ledger/pg-retry.js';
import { jobDeps } from './job-deps.js';
import { checkoutJob } from './repo-cache.js';
import { TaskClones } from './task-clones.js';
import { listenForTaskJobs } from './wakeup.js';
import type { RunJob } from './submit.js';
import { runTaskJob, taskDispatcher, type TaskJob } from './task-jobs.js';
import { startDispatcher } from './dispatch.js';
import { admitJob, type WorkerPolicy } from './worker-policy.js';
import { cancelRequestOf, closeFleetRun, FleetCancelWatch } from './cancel.js';
import { isRefusedAnswer, keepWaiting } from './refused-answer.js';
import { serveMetrics, WorkerMetrics } from './metrics.js';

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
  /** The worker's own policy over submitted runs (its config's `fleetWorker`). */
  policy: WorkerPolicy;
  /** Watches the rows of the runs this worker holds for `acia cancel --db` (startWorker makes one). */
  cancels?: FleetCancelWatch;
  /** Serve Prometheus metrics here (`acia worker --metrics-port`); startWorker makes them. */
  metricsAt?: { host: string; port: number };
  /** Set by startWorker when metricsAt is given: what the worker's parts count. */
  metrics?: WorkerMetrics;
  /** Hours after which a silent worker is forgotten (`--forget-workers-after`). */
  forgetAfterHours?: number;
  /** Set by startWorker: the task jobs' clones, which a run's checkout readies a spare for. */
  clones?: TaskClones;
}

export interface RunningWorker {
  name: string;
  /** Where its Prometheus metrics are served, when they are. */
  metricsUrl: string | null;
  /** Finishes the runs in hand, takes no new ones. */
  stop(): Promise<void>;
}

export async function startWorker(fleet: Fleet, o: WorkerOptions): Promise<RunningWorker> {
  const name = o.name ?? `${hostname()}:${process.pid}`;
  const runsInHand = new Set<Promise<unknown>>();
  const tasksInHand = new Set<Promise<unknown>>();
  const metrics = o.metricsAt ? new WorkerMetrics({ worker: name, db: fleet.db, inHand: () => ({ runs: runsInHand.size, tasks: tasksInHand.size }) }) : undefined;
  const heartbeat = await startHeartbeat(fleet, name, o.concurrency, o.log, {
    ...(o.forgetAfterHours === undefined ? {} : { forgetAfterHours: o.forgetAfterHours }),
    onOutage: (_at, ms) => metrics?.outage(ms),
  });
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
  let stopping = false;
  // The runs this worker is running now, by id: the orphan check requeues any other run marked as held here.
  const holding = new Set<string>();
  const orphans = startOrphanCheck(fleet, name, holding, o.log);
  const cancels = o.cancels ?? new FleetCancelWatch(fleet.db);
  // Task jobs' clones, kept between the jobs of a run (task-clones.ts); gone once their run has ended.
  const clones = new TaskClones(new Git(systemClock), { cacheDir: o.cacheDir, policy: o.policy, log: o.log });
  await clones.start();
  const cloneSweep = setInterval(() => void sweepClones(fleet, clones), CLONE_SWEEP_MS);
  const wo: WorkerOptions & { name: string } = { ...o, name, cancels, clones, ...(metrics ? { metrics } : {}) };
  for (let i = 0; i < o.concurrency; i++) {
    ids.push(
      await fleet.boss.work<RunJob>(RUN_QUEUE, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async ([job]: PgBoss.Job<RunJob>[]) => {
        if (!job) return;
        if (stopping) {
          // A fetch already under way when SIGTERM came handed this job over: give it back (pg-boss
          // re-delivers a failed job to another worker after retryDelay) rather than start a run now.
          await fleet.boss.fail(RUN_QUEUE, job.id, { reason: `worker ${name} is stopping` });
          return;
        }
        if (!(await stillToRun(fleet, job.data))) {
          o.log(`${job.data.runId}: ended, or held by a live worker; this stale job is dropped`);
          return;
        }
        holding.add(job.data.runId);
        try {
          await setRunStatus(fleet.db, job.data.runId, { job_id: job.id, leased_at: new Date() });
          const result = await hold(runsInHand, runJob(fleet, job.data, wo));
          // pg-boss completes the job without waiting or retrying; if the database is away at that moment
          // the job would stay active for its whole expiry and block the run's next job (an answer).
          await retryTransient(() => fleet.boss.complete(RUN_QUEUE, job.id)).catch(() => undefined);
          metrics?.runEnded(result?.reason ?? 'dropped');
          if (result === null) return;
          o.log(`${job.data.runId}: ${result.reason} — ${result.message}`);
        } catch (e) {
          // The job fails and pg-boss retries it (another worker may take it); runJob wrote why in the
          // run's row. The failure is recorded here, waiting out a database that is away: pg-boss's own
          // record of a failed job is not awaited, and a failure nobody recorded leaves the run `running`
          // on a live worker.
          o.log(`${job.data.runId}: ${errorMessage(e)}`);
          metrics?.runEnded('failed_job');
          await retryTransient(() => fleet.boss.fail(RUN_QUEUE, job.id, { message: errorMessage(e) }), { toleranceMs: 10 * 60_000 }).catch(() => undefined);
        } finally {
          holding.delete(job.data.runId);
        }
      }),
    );
  }
  // Task slots beside the run slots: an orchestrator waiting on its tasks must never hold the only slot.
  const taskSlots = o.taskConcurrency ?? o.concurrency;
  for (let i = 0; i < taskSlots; i++) {
    taskIds.push(
      await fleet.boss.work<TaskJob>(TASK_QUEUE, { batchSize: 1, pollingIntervalSeconds: 0.5, includeMetadata: true }, async ([job]: PgBoss.JobWithMetadata<TaskJob>[]) => {
        if (!job) return;
        const taken = Date.now();
        const output = await hold(tasksInHand, runTaskJob(fleet, job.id, job.data, { name, cacheDir: o.cacheDir, env: o.env, log: o.log, leaseSeconds: LEASE_SECONDS, policy: o.policy, cancels, clones, ...(metrics ? { metrics } : {}) }));
        metrics?.taskEnded(output.kind === 'outcome' ? output.outcome.kind : output.kind === 'budget' ? 'budget_exceeded' : `error`, (Date.now() - taken) / 1000, (taken - job.createdOn.getTime()) / 1000);
        // The orchestrator waits for this output: recorded here, waiting out a database that is away, since
        // pg-boss's own record of it is not awaited (a lost one would leave the task active for a day).
        await retryTransient(() => fleet.boss.complete(TASK_QUEUE, job.id, output), { toleranceMs: 10 * 60_000 }).catch(() => undefined);
        return output;
      }),
    );
  }
  const wakeup = taskSlots > 0 ? await listenForTaskJobs(fleet, () => taskIds.forEach((id) => fleet.boss.notifyWorker(id))) : null;
  // Submitters' requests (their roles cannot touch the queue) become jobs here.
  const dispatcher = await startDispatcher(fleet, o.log);
  o.log(`worker ${name}: taking runs (${o.concurrency} at a time) and tasks (${taskSlots} at a time)`);
  const served = metrics && o.metricsAt ? await serveMetrics(metrics, o.metricsAt) : null;
  if (served) o.log(`worker ${name}: metrics at ${served.url}`);
  return {
    name,
    metricsUrl: served?.url ?? null,
    stop: async () => {
      stopping = true;
      // Graceful: the runs in hand finish (their heartbeats go on meanwhile), then the worker leaves.
      // Its task slots stay open until then: a run in hand may be waiting for a task only this worker can take.
      for (const id of ids) await fleet.boss.offWork({ id });
      await Promise.allSettled([...runsInHand]);
      for (const id of taskIds) await fleet.boss.offWork({ id });
      await wakeup?.stop();
      await dispatcher.stop();
      await Promise.allSettled([...tasksInHand]);
      clearInterval(cloneSweep);
      await clones.close();
      orphans.stop();
      cancels.stop();
      await heartbeat.stop();
      await served?.close();
    },
  };
}

/** How often a worker removes the kept clones of runs that have ended. */
const CLONE_SWEEP_MS = 10_000;

async function sweepClones(fleet: Fleet, clones: TaskClones): Promise<void> {
  const runs = clones.idleRuns();
  if (runs.length === 0) return clones.sweep(new Set());
  // Only a run still queued or running (its row there) may send this worker another task job. A database
  // away now just means the next sweep decides.
  const r = await fleet.db
    .query<{ id: string }>(`SELECT id FROM unnest($1::text[]) AS id WHERE NOT EXISTS (SELECT 1 FROM acia_runs r WHERE r.run_id = id AND r.status IN ('queued', 'running'))`, [runs])
    .catch(() => null);
  const ended = new Set(r?.rows.map((row) => row.id) ?? []);
  clones.sweep(ended);
}

/**
 * Whether a job still has work: a job pg-boss hands out again (its completion was lost in a database
 * outage, or it expired) for a run that has since ended must not run it a second time.
 */
async function stillToRun(fleet: Fleet, job: RunJob): Promise<boolean> {
  const r = await retryTransient(() =>
    fleet.db.query<{ status: string; holder_alive: boolean }>(
      `SELECT r.status, (w.name IS NOT NULL AND NOT w.stopped AND w.seen_at >= now() - make_interval(secs => $2)) AS holder_alive
       FROM acia_runs r LEFT JOIN acia_workers w ON w.name = r.worker WHERE r.run_id = $1`,
      [job.runId, LEASE_SECONDS],
    ),
  );
  const row = r.rows[0];
  if (row === undefined) return true;
  // Running on a worker that still beats: this is the job expiring under a long run, not a lost worker
  // (the reaper requeues those); a second worker must not run it beside the first.
  if (row.status === 'running') return !row.holder_alive;
  return ['queued', 'error'].includes(row.status);
}

/**
 * One run on this worker, from a clone; a run the database already has entries for is resumed.
 * Returns null when the run was taken over by another worker meanwhile (this one was fenced out).
 */
export async function runJob(fleet: Fleet, job: RunJob, o: WorkerOptions & { name: string }): Promise<RunResult | null> {
  // A run cancelled while nobody ran it is closed, not run: no policy, clone or setting is needed for that.
  const cancel = await cancelRequestOf(fleet.db, job.runId);
  if (cancel !== null) {
    const status = await closeFleetRun(fleet.db, job.runId, await takeLease(fleet.db, job.runId, '', o.name), cancel, join(o.cacheDir, 'runs', job.runId));
    o.log(`${job.runId}: ${status} (cancel requested by ${cancel.by})`);
    return null;
  }
  // Before the lease, the clone or any setting takes effect: a run this worker's policy refuses ends
  // here, once (no retry would change the answer), with the reason in its row for its submitter.
  try {
    admitJob(o.policy, job);
  } catch (e) {
    if (!isAciaError(e) || e.code !== 'FLEET_POLICY') throw e;
    o.log(`${job.runId}: ${e.message}`);
    await setRunStatus(fleet.db, job.runId, { status: 'error', worker: o.name, message: `worker ${o.name}: ${e.message}${e.hint ? ` (${e.hint})` : ''}` });
    return null;
  }
  const git = new Git(systemClock);
  // The fencing token: from here on, whoever took the run before this worker can no longer write to it.
  const epoch = await takeLease(fleet.db, job.runId, '', o.name, (previous, at) => {
    o.log(`${job.runId}: taken over from worker ${previous} (lease epoch ${at}); resuming from its ledger`);
    o.metrics?.takeover('run');
  });
  const dir = join(o.cacheDir, 'runs', job.runId);
  // Running only if nobody cancelled it meanwhile (the submitter's cancel and this update lock the same row).
  const took = await retryTransient(() =>
    fleet.db.query(
      `UPDATE acia_runs SET status = 'running', worker = $2, updated_at = now()
       WHERE run_id = $1 AND cancel_requested_at IS NULL AND (SELECT epoch FROM acia_leases WHERE run_id = $1 AND scope = '') = $3`,
      [job.runId, o.name, epoch],
    ),
  );
  if (took.rowCount === 0) {
    const late = await cancelRequestOf(fleet.db, job.runId);
    if (late !== null) o.log(`${job.runId}: ${await closeFleetRun(fleet.db, job.runId, epoch, late, dir)} (cancel requested by ${late.by})`);
    return null;
  }
  try {
    const checkout = await checkoutJob(git, { cacheDir: o.cacheDir, repoUrl: job.repoUrl, runId: job.runId, base: job.base, dir, policy: o.policy });
    // The run's task jobs may come to this worker: a clone for them is made ready now, in the background.
    o.clones?.prepare(job.repoUrl, job.base);
    const seen = { ...(o.cancels ? { cancels: o.cancels } : {}), ...(o.metrics ? { metrics: o.metrics } : {}) };
    const deps = await jobDeps(fleet, git, {
      runId: job.runId,
      settings: job.settings,
      checkout,
      fence: { epoch },
      worker: o.name,
      env: o.env,
      log: o.log,
      policy: o.policy,
      ...seen,
      role: {
        kind: 'orchestrator',
        dispatch: (workspace) => taskDispatcher(fleet, job, epoch, { name: o.name, cacheDir: o.cacheDir, env: o.env, log: o.log, leaseSeconds: LEASE_SECONDS, policy: o.policy, ...seen }, workspace),
        // The worker's own directory where the runs it finishes leave their replay bundles.
        bundlesDir: join(o.cacheDir, 'bundles'),
        // The head is anchored in the database too (beside the local anchor), where `acia verify --db` finds it.
        publish: {
          head: (runId, head) => setRunStatus(fleet.db, runId, { head_seq: head?.seq ?? null, head_hash: head?.hash ?? null }, epoch),
          manifest: (manifest) => setRunStatus(fleet.db, job.runId, { status: manifest.status, worker: o.name, cost_usd: manifest.costUsd }, epoch),
        },
      },
    });
    // The run's local directory (manifest, wiki pages) in the clone; its ledger is in the database.
    // Through the containment module: the id is checked, and a clone's `.acia/runs` link is refused.
    ensureRunDir(dir, job.runId);
    const resumed = (await retryTransient(() => fleet.db.query('SELECT 1 FROM acia_ledger WHERE run_id = $1 LIMIT 1', [job.runId]))).rowCount !== 0;
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
    if (isRefusedAnswer(job.answer, e)) {
      const status = await keepWaiting(fleet.db, job.runId, epoch, dir, errorMessage(e));
      o.log(`${job.runId}: answer refused (${errorMessage(e)}); ${status} again`);
      return null;
    }
    // Only while this worker still holds the run: a worker that lost it never writes over the new owner's row.
    await setRunStatus(fleet.db, job.runId, { status: 'error', worker: o.name, message: errorMessage(e) }, epoch).catch(() => undefined);
    throw e;
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
