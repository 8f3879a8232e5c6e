// One dev task of a run whose orchestrator is elsewhere (a fleet worker took the task's job): the run's
// ledger opened as a second writer, its state folded, the run worktree at the run branch, then the
// same runDevTask a local run calls, merge included. The orchestrator folds the entries it wrote.
import { realpath } from 'node:fs/promises';
import { AciaError } from '../core/errors.js';
import type { TeamDeps } from './deps.js';
import { Git, repoRoot } from './git.js';
import { ensureContext, recordedContext } from './planning.js';
import { guardAciaState } from '../core/contain/clone-guard.js';
import { ensureRunDir } from '../core/contain/acia-state.js';
import { detectTestCommandInGit, localRepoReader } from './repo-reader.js';
import { foldRun } from './run-state.js';
import type { TaskOutcome } from './task-common.js';
import { runDevTask } from './task-dev.js';
import { makeContext } from './team.js';
import { loadRunRoles } from './roles.js';
import { lazy } from './lazy.js';

export interface RemoteTaskOptions {
  /** A clone of the run's repository with its run and task branches, this job's alone while it runs: the caller removes (or keeps) it. */
  dir: string;
  /** Set when `dir` is the top of the clone the caller made itself: git need not be asked. */
  dirIsTop?: boolean;
  runId: string;
  taskId: string;
  /** The clone guard (guardAciaState) on `dir`, started by the caller as soon as it had the clone; run here when absent. */
  guarded?: Promise<void>;
}

export async function runTaskHere(deps: TeamDeps, o: RemoteTaskOptions): Promise<TaskOutcome> {
  const git = new Git(deps.runtime.clock);
  const repo = o.dirIsTop ? await realpath(o.dir) : await repoRoot(git, o.dir);
  const runDir = ensureRunDir(repo, o.runId);
  // The clone is of a repository anyone may have pushed to: the same checks as a resumed run, done while
  // the ledger is read from its store (nothing is written before both are done).
  const guarded = o.guarded ?? guardAciaState(repo);
  const opened = deps.store.openLedger(runDir, o.runId, { create: false });
  const [guard, open] = await Promise.allSettled([guarded, opened]);
  if (guard.status === 'rejected') {
    if (open.status === 'fulfilled') await open.value.close();
    throw guard.reason;
  }
  if (open.status === 'rejected') throw open.reason;
  const ledger = open.value;
  const state = foldRun(ledger.entries());
  const ctx = makeContext(deps, repo, o.runId, runDir, ledger, state);
  let ahead: Promise<void> = Promise.resolve();
  try {
    const started = state.started;
    const task = state.tasks.get(o.taskId);
    if (!started || state.contextRef === null) throw new AciaError('RUN_NOT_FOUND', `run ${o.runId} has not planned yet; it has no task ${o.taskId} to run`);
    if (!task || !task.spec.capability.startsWith('dev.')) throw new AciaError('PLAN_INVALID', `run ${o.runId} has no dev task ${o.taskId}`);
    // A job delivered twice, or after its task ended: the ledger already says how it went.
    if (task.status === 'completed') return { kind: 'completed' };
    // The run is opened while the run's context is read back: neither needs the other. (A fleet task job's
    // open checks nothing out, and returns at once when the job began its task worktree at hand-over.)
    const opening = ctx.workspace.openRun(started.baseCommit, false);
    opening.catch(() => undefined);
    // And the task's worktree, as soon as the run head is known (the attempt takes it): its checkout need
    // not wait for the context either.
    const checkpoint = task.lastCheckpoint;
    ahead = opening.then(() => ctx.workspace.prepareAhead?.(o.taskId, checkpoint)).catch(() => undefined);
    // The context the run recorded when it planned (its packet carries what the agents are told); an older
    // packet that does not is built again from the base's objects, as before. Nothing is recorded either way.
    if (!(await recordedContext(ctx))) {
      const reader = localRepoReader(git)(repo, started.baseCommit, ctx.workspace);
      ctx.testCommand ??= await detectTestCommandInGit(reader);
      await ensureContext(ctx, reader, started.goal);
    }
    // The roles the orchestrator recorded (read back, nothing recorded): the task runs as its role, with its model.
    await loadRunRoles(ctx);
    // Once the run head is known. A fleet task job's run worktree is checked out only if something asks for
    // it (MCP servers, which serve it; a hook with no task worktree): the task works in its own.
    await opening;
    ctx.workspaceReady = lazy(() => ctx.workspace.runWorktreeReady?.() ?? Promise.resolve());
    await deps.tools.mcp.open(ctx.workspace.runWorktree, { worktreeReady: ctx.workspaceReady });
    // Messages to this task (`acia say --db`) are taken here, where its agent runs: an interrupt stops its call.
    await ctx.mailbox.start(ctx);
    return await runDevTask(ctx, o.taskId);
  } finally {
    ctx.mailbox.stop();
    ctx.cancel.stop();
    await deps.tools.mcp.close();
    // Nothing of the job's git may still run in the clone once it is given back.
    await ctx.workspace.idle?.();
    await ahead;
    await ledger.close();
  }
}
