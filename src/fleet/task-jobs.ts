// The second level of distribution: one run's dev tasks as jobs any worker may take. The run's lease
// holder (its orchestrator) sends each ready dev task to the task queue with its lease epoch and a
// fresh task token; the worker that takes it checks out the run, opens the ledger as a second writer
// behind that fence, runs the task (merge into the run branch included) and returns its outcome as
// the job's output. The orchestrator waits, folds the entries the task wrote, pulls the run branch
// and goes on. A task whose worker stops answering is handed to another: its token moves on (the lost
// worker's late writes are refused) and the attempt restarts from its last pushed checkpoint.
import { randomUUID } from 'node:crypto';
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { runWorktreesDir } from '../core/contain/acia-state.js';
import { isRunId } from '../core/contain/run-id.js';
import { TaskId } from '../core/acm/contracts.js';
import { ensureRealDir } from '../core/contain/no-follow.js';
import { systemClock } from '../core/acm/ids.js';
import { guardAciaState } from '../core/contain/clone-guard.js';
import { AciaError, errorMessage, isAciaError, type ErrorCode } from '../core/errors.js';
import { assertFence, checkFence, takeLease } from '../core/ledger/pg-lease.js';
import { dbOutageToleranceMs, retryTransient } from '../core/ledger/pg-retry.js';
import { BudgetExceededError, type BudgetBreach } from '../team/budget.js';
import { Git } from '../team/git.js';
import { handoutLost } from '../team/handout.js';
import { runTaskHere } from '../team/remote-task.js';
import { taskBranchOf } from '../team/workspace.js';
import type { RunContext } from '../team/run-context.js';
import type { TaskOutcome } from '../team/task-common.js';
import { TASK_QUEUE, type Fleet } from './fleet-db.js';
import { jobDeps } from './job-deps.js';
import type { FleetWorkspace } from './fleet-workspace.js';
import type { TaskClones, TakenClone } from './task-clones.js';
import { announceTaskJob } from './wakeup.js';
import type { RunJob } from './submit.js';
import type { WorkerPolicy } from './worker-policy.js';
import type { FleetCancelWatch } from './cancel.js';
import type { WorkerMetrics } from './metrics.js';

/** How often the orchestrator looks at a task job it waits for. */
const POLL_MS = 100;
/** A task handed out this many times without an answer fails the run rather than loop. */
const MAX_HANDOUTS = 4;
const QUEUED_WARNING_MS = 30_000;

export interface TaskJob {
  runId: string;
  taskId: string;
  repoUrl: string;
  /** The run's base commit (as recorded in RUN_STARTED). */
  base: string;
  /**
   * The run branch's head as the orchestrator had it when it handed the task out, set for a task's first
   * attempt from that head (no checkpoint, not a merge task): the worker begins the task worktree there
   * at once, beside the fetch of the run's branches.
   */
  runHead?: string;
  settings: Record<string, unknown>;
  /** The orchestrator's lease epoch: the task's writes stand only while it holds the run. */
  epoch: number;
  /** This hand-out's token: a later hand-out of the same task fences this one. */
  token: number;
  orchestrator: string;
}

export type TaskJobOutput =
  | { kind: 'outcome'; outcome: TaskOutcome }
  | { kind: 'budget'; breach: BudgetBreach }
  | { kind: 'error'; code: ErrorCode | null; message: string };

interface WorkerContext {
  name: string;
  cacheDir: string;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** The lease horizon: a worker whose heartbeat is older has lost its jobs. */
  leaseSeconds: number;
  /** This worker's policy over what submitters ask (worker-policy.ts). */
  policy: WorkerPolicy;
  /** The worker's watch for `acia cancel --db` over the runs it holds. */
  cancels?: FleetCancelWatch;
  /** The worker's Prometheus metrics, when it serves them. */
  metrics?: WorkerMetrics;
}

/** The orchestrator's side: TeamDeps.dispatchTask for a run this worker holds at `epoch`. */
export function taskDispatcher(fleet: Fleet, job: RunJob, epoch: number, w: WorkerContext, workspace: () => FleetWorkspace | undefined): (ctx: RunContext, taskId: string) => Promise<TaskOutcome> {
  return async (ctx, taskId) => {
    let lost: string | null = null;
    for (let handout = 1; ; handout++) {
      const token = await takeLease(fleet.db, job.runId, taskId, w.name);
      if (lost !== null) await handoutLost(ctx, taskId, lost);
      const task = ctx.state.tasks.get(taskId);
      const fresh = task !== undefined && task.lastCheckpoint === null && task.spec.capability !== 'dev.merge';
      const data: TaskJob = {
        runId: job.runId,
        taskId,
        repoUrl: job.repoUrl,
        base: ctx.state.started?.baseCommit ?? job.base,
        settings: job.settings,
        epoch,
        token,
        orchestrator: w.name,
        ...(fresh ? { runHead: await ctx.workspace.runHead() } : {}),
      };
      // The job's id is chosen here, so a send retried after a database restart (its first attempt may
      // have committed, its answer lost) can never put the same hand-out on the queue twice.
      const id = randomUUID();
      await retryTransient(async (attempt) => {
        const sent = await fleet.boss.send(TASK_QUEUE, data, { id, retryLimit: 0, expireInSeconds: 23 * 3600 });
        if (sent === null && attempt === 0) throw new AciaError('INTERNAL', `task ${taskId}: the task queue refused the job`);
      });
      await announceTaskJob(fleet);
      const end = await waitForTaskJob(fleet, job.runId, epoch, id, w, ctx.deps.runtime.signal);
      if (end.kind === 'stopped') {
        // The run is stopping (cancelled): the job is withdrawn and its hand-out fenced, so nothing its
        // worker still writes lands after the run's end.
        await fleet.boss.cancel(TASK_QUEUE, id).catch(() => undefined);
        await takeLease(fleet.db, job.runId, taskId, w.name);
        throw new AciaError('ABORTED', `task ${taskId}: the run is stopping`);
      }
      if (end.kind === 'lost') {
        await fleet.boss.cancel(TASK_QUEUE, id).catch(() => undefined);
        lost = end.why;
        w.log(`${job.runId}: task ${taskId}: ${lost}; handing it out again`);
        w.metrics?.takeover('task');
        if (handout >= MAX_HANDOUTS) throw new AciaError('INTERNAL', `task ${taskId} was handed out ${handout} times and never finished: ${lost}`);
        continue;
      }
      // The task's entries and its merge are in: fold them and bring the run worktree to the run branch.
      await workspace()?.syncRunBranch();
      await ctx.rec.sync();
      const out = end.output;
      if (out.kind === 'outcome') return out.outcome;
      if (out.kind === 'budget') throw new BudgetExceededError(out.breach);
      if (out.code === 'LEDGER_FENCED') {
        // Either this orchestrator lost the run (checkFence throws: it stops here) or only that
        // hand-out was superseded: then the task is handed out again like a lost one.
        await checkFence(fleet.db, job.runId, { epoch }, false);
        lost = `its hand-out was fenced (${out.message})`;
        w.log(`${job.runId}: task ${taskId}: ${lost}`);
        if (handout >= MAX_HANDOUTS) throw new AciaError('INTERNAL', `task ${taskId} was handed out ${handout} times and never finished: ${lost}`);
        continue;
      }
      throw new AciaError(out.code ?? 'INTERNAL', `task ${taskId} on another worker: ${out.message}`);
    }
  };
}

type JobEnd = { kind: 'finished'; output: TaskJobOutput } | { kind: 'lost'; why: string } | { kind: 'stopped' };

async function waitForTaskJob(fleet: Fleet, runId: string, epoch: number, id: string, w: WorkerContext, signal: AbortSignal): Promise<JobEnd> {
  const sent = Date.now();
  let checked = sent;
  let warned = false;
  // Since when this wait has seen the database answer without a break. Right after an outage every
  // heartbeat is stale, live workers' included, until they beat again: a task's worker is judged lost
  // only once the database has been up for a whole lease here (as the run reaper does).
  let upSince: number | null = null;
  // Since when it has not: past the worker's patience the wait fails, and with it the run in hand, as
  // any other database operation of the run would (pg-boss then retries the run; it resumes).
  let downSince: number | null = null;
  for (;;) {
    await new Promise((r) => setTimeout(r, POLL_MS));
    if (signal.aborted) return { kind: 'stopped' };
    try {
      const job = (await fleet.boss.getJobById<TaskJob>(TASK_QUEUE, id)) ?? (await fleet.boss.getJobById<TaskJob>(TASK_QUEUE, id, { includeArchive: true }));
      upSince ??= Date.now();
      downSince = null;
      if (job?.state === 'completed') return { kind: 'finished', output: job.output as TaskJobOutput };
      if (job === null || job.state === 'failed' || job.state === 'cancelled') {
        return { kind: 'lost', why: `its job ended ${job?.state ?? 'missing'}${job?.output ? `: ${JSON.stringify(job.output).slice(0, 200)}` : ''}` };
      }
      if (job.state === 'created' && !warned && Date.now() - sent > QUEUED_WARNING_MS) {
        // Every worker may be busy, or none takes tasks (--task-concurrency 0 everywhere): say so once.
        warned = true;
        w.log(`${runId}: task job ${id} still waits for a worker with a free task slot`);
      }
      if (job.state === 'active' && Date.now() - upSince >= w.leaseSeconds * 1000) {
        const holder = await fleet.db.query<{ worker: string; stale: boolean }>(
          `SELECT t.worker, (w.name IS NULL OR w.seen_at < now() - make_interval(secs => $2)) AS stale
           FROM acia_task_jobs t LEFT JOIN acia_workers w ON w.name = t.worker WHERE t.job_id = $1`,
          [id, w.leaseSeconds],
        );
        const h = holder.rows[0];
        if (h?.stale) return { kind: 'lost', why: `its worker ${h.worker} stopped answering` };
      }
      // Now and then: is this orchestrator still the run's? If not, it stops waiting and drops the run.
      if (Date.now() - checked > 2_000) {
        checked = Date.now();
        await checkFence(fleet.db, runId, { epoch }, false);
      }
    } catch (e) {
      if (isAciaError(e) && e.code === 'LEDGER_FENCED') throw e;
      // The database is away for a moment: look again, for as long as the worker's patience allows.
      upSince = null;
      downSince ??= Date.now();
      if (Date.now() - downSince > dbOutageToleranceMs()) throw e;
    }
  }
}

/**
 * A first attempt's task worktree, begun from the run head the orchestrator named as soon as the clone is
 * there and its guard passed (a hostile repository's `.acia` is refused before anything is checked out
 * under it): the fetch of the run's branches, which its pushes lease on, goes on beside it. Undefined when
 * the job names no run head; `made` is false when the checkout failed (the clone lacks that commit): the
 * attempt then makes it after the fetch, as before.
 */
function earlyTaskWorktree(git: Git, job: TaskJob, clone: Promise<TakenClone>, guarded: Promise<void>): { taskId: string; base: string; made: Promise<boolean> } | undefined {
  const head = job.runHead;
  // The payload names a commit and a path under the clone: only a commit id, a run id and a task id go on.
  if (head === undefined || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(head) || !isRunId(job.runId) || !TaskId.safeParse(job.taskId).success) return undefined;
  const made = Promise.all([clone, guarded]).then(async ([c]) => {
    const repo = await realpath(c.checkout.dir);
    const root = runWorktreesDir(repo, job.runId);
    // Real directories all the way, as the workspace makes sure for every worktree of a run.
    ensureRealDir(repo, root);
    const r = await git.run(repo, ['worktree', 'add', '--force', '-B', taskBranchOf(job.runId, job.taskId), join(root, job.taskId), head], { allowFail: true });
    return r.exitCode === 0;
  });
  return { taskId: job.taskId, base: head, made: made.catch(() => false) };
}

/** The worker's side: one task job, from checkout to outcome. Never throws: the output says how it went. */
export async function runTaskJob(fleet: Fleet, id: string, job: TaskJob, w: WorkerContext & { clones: TaskClones }): Promise<TaskJobOutput> {
  const git = new Git(systemClock);
  const fence = { epoch: job.epoch, task: { taskId: job.taskId, token: job.token } };
  // Set once the clone is there (TypeScript cannot see the assignment in the callback below).
  let taken = null as TakenClone | null;
  let ok = false;
  // The task worktree begun at hand-over, when the job names the run head: set once the clone is asked for.
  let early: ReturnType<typeof earlyTaskWorktree> = undefined;
  try {
    // The clone made ready, and the team's parts set up in it (settings, budget, ledger store: reads only),
    // while the job's record and its fence are checked in the database. Nothing is pushed or written to
    // the ledger before all of it is done, and a superseded hand-out (its orchestrator lost the run, or the
    // task went elsewhere) does no work.
    const ready = w.clones.take(job).then((clone) => {
      taken = clone;
      return clone;
    });
    const depsReady = ready.then((clone) =>
      jobDeps(fleet, git, { runId: job.runId, settings: job.settings, checkout: clone.checkout, fence, worker: w.name, env: w.env, log: w.log, policy: w.policy, ...(w.cancels ? { cancels: w.cancels } : {}), ...(w.metrics ? { metrics: w.metrics } : {}), role: { kind: 'task', taskId: job.taskId }, ...(early ? { early } : {}) }),
    );
    // Awaited below; a failure meanwhile must not count as unhandled.
    depsReady.catch(() => undefined);
    // The clone guard (a repository anyone may have pushed to) as soon as the clone is there, beside the
    // database side and the deps: the session waits for it before it reads anything of the run.
    // A spare the worker guarded when it made it, untouched since, is not guarded again.
    const guarded = ready.then(async (clone) => (clone.checkout.guarded ? undefined : guardAciaState(await realpath(clone.checkout.dir))));
    guarded.catch(() => undefined);
    early = earlyTaskWorktree(git, job, ready, guarded);
    try {
      // The job's row, and the fence read by the same statement (one round trip): a superseded hand-out stops here.
      const lease = await retryTransient(() =>
        fleet.db.query<{ epoch: string | null; token: string | null }>(
          `INSERT INTO acia_task_jobs (job_id, run_id, task_id, worker) VALUES ($1, $2, $3, $4) ON CONFLICT (job_id) DO UPDATE SET worker = $4, started_at = now()
           RETURNING (SELECT epoch FROM acia_leases WHERE run_id = $2 AND scope = '') AS epoch, (SELECT epoch FROM acia_leases WHERE run_id = $2 AND scope = $3) AS token`,
          [id, job.runId, job.taskId, w.name],
        ),
      );
      assertFence(job.runId, fence, lease.rows[0]?.epoch ?? null, lease.rows[0]?.token ?? null);
    } finally {
      // The clone is given back (below) only once it is known, whichever way this went.
      await ready.catch(() => undefined);
    }
    const deps = await depsReady;
    const clone = await ready;
    const outcome = await runTaskHere(deps, { dir: clone.checkout.dir, dirIsTop: true, runId: job.runId, taskId: job.taskId, guarded });
    w.log(`${job.runId}: task ${job.taskId}: ${outcome.kind}`);
    // A clone an unsandboxed command could reach (its .git, hooks, config) is never trusted for another job.
    ok = deps.config.sandbox !== 'off';
    return { kind: 'outcome', outcome };
  } catch (e) {
    w.log(`${job.runId}: task ${job.taskId}: ${errorMessage(e)}`);
    if (e instanceof BudgetExceededError) return { kind: 'budget', breach: e.breach };
    return { kind: 'error', code: isAciaError(e) ? e.code : null, message: errorMessage(e) };
  } finally {
    // No git of this job may still run in the clone when it is given back (a job fenced at once, say).
    await early?.made;
    // Kept for the run's next task job on this worker only after an outcome of a sandboxed run; else removed.
    taken?.release(ok);
  }
}
