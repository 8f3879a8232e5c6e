// The Team: starts a run (or resumes one from its ledger), plans, executes, and ends it with a
// terminal reason, the manifest anchor and the wiki.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PlanSet, type ContextPacket, type Goal } from '../core/acm/contracts.js';
import { canonicalJson } from '../core/acm/canonical-json.js';
import { ACM_VERSION } from '../core/acm/acm-version.js';
import { AciaError, errorMessage, isAciaError } from '../core/errors.js';
import type { EventDataOf } from '../core/ledger/events.js';
import type { RunManifest } from '../core/ledger/run-vocabulary.js';
import type { RunLedger } from '../core/ledger/types.js';
import type { TeamDeps } from './deps.js';
import type { McpCatalog } from '../core/tools/mcp/catalog.js';
import { execute, recordAnswer } from './executor.js';
import { checkUntracked, excludeAciaDir, Git, probeRepo, repoRoot, snapshotWorkingTree, type RepoFacts } from './git.js';
import { adoptPlan, ensureContext, planRun } from './planning.js';
import { Recorder } from './recorder.js';
import type { RunContext } from './run-context.js';
import { emptyRunState, finishedReason, foldRun, openEscalation, type RunState } from './run-state.js';
import { judgeRun } from './outcome.js';
import { runFinalTests } from './final-check.js';
import { lazy } from './lazy.js';
import { LiveMailbox } from './mailbox.js';
import { builtinRoles, loadRunRoles } from './roles.js';
import { checkApprovalAnswer, recordDecision, type ApprovalDecision } from './plan-approval.js';
import { cleanedRun, hasStartedWork, latestResumableRun } from './run-status.js';
import { budgetRaised, checkAnswer } from './resume-answer.js';

export { latestResumableRun } from './run-status.js';
export type { RunResult } from './run-end.js';
import { goalCard } from './goal-card.js';
import { finish, manifestOf, resultOf, saveManifest, writeBundle, type DriveOutcome, type RunResult } from './run-end.js';
import { detectTestCommandInGit } from './repo-reader.js';
import { Workspace } from './workspace.js';
import { guardAciaState } from '../core/contain/clone-guard.js';
import { ensureRunDir, requireRunDir } from '../core/contain/acia-state.js';

export interface StartOptions {
  /** Any directory inside the repository. */
  dir: string;
  /**
   * What `probeRepo` answered for `dir` a moment ago (the CLI asks before it reads the repository's
   * config), so it is not asked again on the way to the first model request.
   */
  repoFacts?: RepoFacts;
  /**
   * `guardAciaState(root)` for this repository, started earlier by the caller (the CLI starts it
   * beside `git status`); awaited where startRun would run it, before anything is written.
   */
  stateGuard?: Promise<void>;
  goal: string;
  /** Snapshot uncommitted changes into the run's base commit. */
  includeUncommitted?: boolean;
  /** With includeUncommitted: take more than UNTRACKED_LIMIT untracked files. */
  forceUncommitted?: boolean;
  /** Stop once the plan is chosen (`acia plan`). */
  planOnly?: boolean;
  /** Execute this saved plan set instead of asking the PM (`acia exec`). */
  planSet?: PlanSet;
  /** Execute the saved plan set even when it was planned against another Context Packet (recorded as GOAL_AMENDED). */
  rebindContext?: boolean;
  /** Plan from this Context Packet instead of one built from the repository (`acia plan --context`). */
  contextPacket?: ContextPacket;
  /**
   * Start from this commit instead of HEAD: a follow-up goal builds on an earlier run's head (`acia acp`,
   * a prompt after a finished run). Must name a commit of the repository.
   */
  baseCommit?: string;
}

/**
 * Starts a run: records RUN_STARTED in a new ledger under `.acia/runs/<runId>`, plans with the PM, executes the
 * plan in worktrees on branch `acia/<runId>` and ends with a terminal reason. Never touches the user's checkout.
 *
 * @param deps every outside dependency (model, clock, sandbox, ledger...); `createDeps` (src/app) makes the real ones.
 * @returns how the run ended; failures of the run itself are reported here, not thrown.
 * @throws AciaError NOT_A_GIT_REPO / REPO_NO_COMMITS before anything is written.
 */
export async function startRun(deps: TeamDeps, opts: StartOptions): Promise<RunResult> {
  const git = new Git(deps.runtime.clock);
  const facts = opts.repoFacts ?? (await probeRepo(git, opts.dir));
  const repo = facts.root;
  const head = facts.head;
  if (opts.includeUncommitted) await checkUntracked(git, repo, opts.forceUncommitted ?? false);
  const base = opts.baseCommit !== undefined ? await commitOf(git, repo, opts.baseCommit) : opts.includeUncommitted ? await snapshotWorkingTree(git, repo, head) : head;
  const now = deps.runtime.clock.now();
  const runId = deps.runtime.ids.runId(now);
  await excludeAciaDir(git, repo, facts.commonDir);
  await (opts.stateGuard ?? guardAciaState(repo));
  const runDir = ensureRunDir(repo, runId);
  // Anchored before the ledger exists, so a crash at any point leaves a run this user can resume.
  await deps.store.anchor.write(runDir, runId, null, 'running');
  const ledger = await deps.store.openLedger(runDir, runId, { create: true });
  const state = emptyRunState();
  const ctx = makeContext(deps, repo, runId, runDir, ledger, state);
  // The PM's context is read over the run's `cat-file --batch` pipe: its git starts now, while RUN_STARTED is made durable.
  if (ctx.workspace instanceof Workspace) ctx.workspace.objects.read(base).catch(() => undefined);
  ctx.mode = { planOnly: opts.planOnly ?? false, planSet: opts.planSet ?? null, rebindContext: opts.rebindContext ?? false };
  // A saved plan executes the goal it was planned for: same goal id, so an unchanged repository yields
  // the same Context Packet and the plan's contextRef can be checked against it.
  const goal: Goal = goalCard({
    id: opts.planSet?.goalId ?? opts.contextPacket?.goalId ?? `goal-${runId}`,
    intent: opts.goal,
    runId,
    createdAt: now.toISOString(),
    aciaVersion: deps.runtime.aciaVersion,
    config: deps.config,
  });
  const contextPacketRef = opts.contextPacket ? await ctx.rec.blob(canonicalJson(opts.contextPacket)) : undefined;
  const exec = opts.planSet ? { planSetRef: await ctx.rec.blob(canonicalJson(opts.planSet)), rebindContext: opts.rebindContext ?? false } : undefined;
  return beginRun(ctx, {
    goal,
    repo,
    baseCommit: base,
    baseBranch: facts.branch,
    runBranch: ctx.workspace.runBranch,
    model: deps.model.spec,
    settings: sessionSettings(deps),
    aciaVersion: deps.runtime.aciaVersion,
    acmVersion: ACM_VERSION,
    ...(exec ? { exec } : {}),
    ...(opts.planOnly ? { planOnly: true } : {}),
    ...(contextPacketRef === undefined ? {} : { contextPacketRef }),
  });
}

async function commitOf(git: Git, repo: string, ref: string): Promise<string> {
  const r = await git.run(repo, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], { allowFail: true });
  if (r.exitCode !== 0) throw new AciaError('USAGE', `${ref} is not a commit of ${repo}`);
  return r.stdout.trim();
}

async function beginRun(ctx: RunContext, started: EventDataOf<'RUN_STARTED'>): Promise<RunResult> {
  await ctx.rec.record('team', 'RUN_STARTED', started);
  await saveManifest(ctx, 'running');
  return drive(ctx, started.baseCommit);
}

/**
 * Runs a recorded run again from its RUN_STARTED data into `ledger` (replay passes an in-memory one
 * and deps that serve recorded responses), without touching the repository.
 */
export async function rerunRecorded(deps: TeamDeps, repo: string, runId: string, ledger: RunLedger, started: EventDataOf<'RUN_STARTED'>): Promise<RunResult> {
  const ctx = makeContext(deps, repo, runId, ledger.dir, ledger, emptyRunState());
  ctx.mode = await recordedMode(ledger, started);
  return beginRun(ctx, started);
}

/** An `acia exec` run goes on (resume, replay) with the plan set it was given; an `acia plan` run stops where it stopped. */
async function recordedMode(ledger: RunLedger, started: EventDataOf<'RUN_STARTED'>): Promise<RunContext['mode']> {
  const planSet = started.exec ? PlanSet.parse(JSON.parse((await ledger.getBlob(started.exec.planSetRef)).toString('utf8'))) : null;
  return { planOnly: started.planOnly ?? false, planSet, rebindContext: started.exec?.rebindContext ?? false };
}

export interface ResumeOptions {
  dir: string;
  runId?: string;
  answer?: string;
}

/**
 * Resumes an unfinished run from its ledger (the latest when `opts.runId` is absent), optionally recording a
 * human answer to its open escalation first.
 *
 * @throws AciaError RUN_NOT_FOUND when there is no such run or it never started.
 */
export async function resumeRun(deps: TeamDeps, opts: ResumeOptions): Promise<RunResult> {
  const git = new Git(deps.runtime.clock);
  const repo = await repoRoot(git, opts.dir);
  await guardAciaState(repo);
  const runId = opts.runId ?? (await latestResumableRun(repo, (b) => git.branchExists(repo, b)));
  // The id, every directory on the way and the run's files are checked before anything is read.
  const runDir = requireRunDir(repo, runId);
  await deps.store.anchor.check(runDir, runId);
  const ledger = await deps.store.openLedger(runDir, runId, { create: false });
  // The repository's side (continueRun, which replay runs too, touches none): `acia clean` removed the
  // run's branch, so going on would rebuild it from the base and lose the recorded work.
  const state = foldRun(ledger.entries());
  const finished = finishedReason(state) !== null && state.completed !== null;
  // A cancelled run only has its end left to write (continueRun), whatever became of its branch.
  const cancelled = state.cancelRequested !== null;
  if (state.started && !finished && !cancelled && hasStartedWork(state) && !(await git.branchExists(repo, state.started.runBranch))) {
    await ledger.close();
    throw cleanedRun(runId);
  }
  return continueRun(deps, { repo, runId, runDir, ledger, ...(opts.answer === undefined ? {} : { answer: opts.answer }) });
}

export interface ContinueOptions {
  repo: string;
  runId: string;
  runDir: string;
  ledger: RunLedger;
  /** The human's answer to the open escalation, as given to `acia resume --answer`. */
  answer?: string;
}

/**
 * A new session of a run on its opened ledger: what `acia resume` does once the run is found and checked,
 * and what replay does for each session a recording was resumed in, so both take the same decisions.
 */
export async function continueRun(deps: TeamDeps, opts: ContinueOptions): Promise<RunResult> {
  const { repo, runId, runDir, ledger } = opts;
  const state = foldRun(ledger.entries());
  if (!state.started) {
    await ledger.close();
    throw notStarted(runId);
  }
  const ctx = makeContext(deps, repo, runId, runDir, ledger, state);
  ctx.mode = await recordedMode(ledger, state.started);
  const finished = finishedReason(state);
  if (finished !== null && state.completed !== null) {
    const anchored = await readManifest(runDir);
    if (anchored?.status !== state.completed.reason) {
      // A crash after RUN_COMPLETED but before the manifest: anchor the head now (bundle first), redo nothing.
      await ledger.close();
      const failed = await writeBundle(ctx, manifestOf(ctx, state.completed.reason));
      if (failed !== null) throw new AciaError('LEDGER_IO', `run ${runId} finished, but its replay bundle could not be written: ${failed}`, { hint: `try again: acia resume ${runId}` });
      await saveManifest(ctx, state.completed.reason);
      await deps.store.renderWiki(repo, { runId, entries: ledger.entries() }).catch(() => undefined);
      return resultOf(ctx, state.completed.reason, `already finished: ${state.completed.message}`);
    }
    await ledger.close();
    throw new AciaError('RUN_FINISHED', `run ${runId} is finished (${finished}); there is nothing to resume`, {
      hint: `see it with \`acia show ${runId}\`, or start a new run with \`acia run "<task>"\``,
    });
  }
  // Cancelled, and the session that recorded it died before its end: the end is all that is left to write.
  if (state.cancelRequested !== null && state.completed === null) return finish(ctx, { kind: 'cancelled', request: state.cancelRequested });
  const open = openEscalation(state);
  // The plan approval gate takes its own answers (switch, edit), checked against the plans before anything is recorded.
  let decision: ApprovalDecision | null = null;
  if (opts.answer !== undefined && open?.reason === 'plan_approval') {
    try {
      decision = await checkApprovalAnswer(ctx, opts.answer);
    } catch (e) {
      await ledger.close();
      throw e;
    }
  }
  const answer = opts.answer === undefined || decision !== null ? null : checkAnswer(runId, open, opts.answer);
  if (answer !== null && open === null) {
    await ledger.close();
    throw new AciaError('USAGE', `run ${runId} is not waiting for an answer; resume it without --answer`);
  }
  const raised = answer === null && open?.reason === 'budget_exceeded' ? budgetRaised(ctx) : null;
  // What this session runs with is recorded: a replay of the session must run with the same.
  await ctx.rec.record('team', 'RUN_RESUMED', { pid: process.pid, ...(opts.answer === undefined ? {} : { answer: opts.answer }), model: deps.model.spec, settings: sessionSettings(deps) });
  // The anchored head moves on: until this session ends the run is unfinished again.
  await saveManifest(ctx, 'running');
  if (decision !== null && open !== null) {
    await recordDecision(ctx, open, decision, ctx.state.planSet!);
  } else if (answer !== null && open !== null) {
    await recordAnswer(ctx, open.seq, answer.action, answer.text);
  } else if (raised !== null && open !== null) {
    // Resuming with a higher limit answers the budget stop: the run goes on under the new limits.
    await ctx.rec.record('human', 'HUMAN_RESPONSE', { escalationSeq: open.seq, action: 'retry', text: raised });
  }
  return drive(ctx, state.started.baseCommit);
}

function sessionSettings(deps: TeamDeps): EventDataOf<'RUN_STARTED'>['settings'] {
  const c = deps.config;
  return {
    parallel: c.parallel,
    maxIterations: c.maxIterations,
    sandbox: c.sandbox,
    budget: c.budget,
    memoryLessons: c.memoryLessons,
    ...(Object.keys(c.roleModels).length > 0 ? { roleModels: c.roleModels } : {}),
    ...(c.approvePlan ? { approvePlan: true } : {}),
  };
}

/** A run whose ledger has no RUN_STARTED (killed while it was being created): nothing to resume. */
export function notStarted(runId: string): AciaError {
  return new AciaError('RUN_NOT_FOUND', `run ${runId} was interrupted before it started (its ledger has no RUN_STARTED); there is nothing to resume`, {
    hint: 'start it again with `acia run "<task>"`',
  });
}

async function readManifest(runDir: string): Promise<RunManifest | null> {
  try {
    return JSON.parse(await readFile(join(runDir, 'manifest.json'), 'utf8')) as RunManifest;
  } catch {
    return null;
  }
}

/** A run context over an opened ledger and folded state (a session of the run, or one task of it run elsewhere). */
export function makeContext(deps: TeamDeps, repo: string, runId: string, runDir: string, ledger: RunLedger, state: RunState): RunContext {
  const listener = deps.runtime.onEvent;
  // A request to cancel aborts the session's model calls and commands like Ctrl-C does; the executor
  // then tells the two apart by the watch's request.
  const cancel = deps.runtime.cancelWatch(runDir, runId);
  const session: TeamDeps = { ...deps, runtime: { ...deps.runtime, signal: AbortSignal.any([deps.runtime.signal, cancel.signal]) } };
  return {
    cancel,
    deps: session,
    repo,
    runId,
    runDir,
    rec: new Recorder(ledger, state, deps.runtime.clock, (entry) => listener({ kind: 'entry', entry, state })),
    state,
    workspace: session.store.workspace(repo, runId),
    workspaceReady: lazy(() => Promise.resolve()),
    instructions: [],
    facts: {},
    testCommand: deps.config.testCommand ?? null,
    sessionStartMs: deps.runtime.clock.now().getTime(),
    mailbox: deps.runtime.mailbox?.() ?? new LiveMailbox(),
    roles: builtinRoles(deps.model),
    mode: { planOnly: false, planSet: null, rebindContext: false },
  };
}

async function drive(ctx: RunContext, base: string): Promise<RunResult> {
  let outcome: DriveOutcome;
  // The run worktree is checked out while the PM's first call is out (a checkout of a large repository
  // takes seconds; the context is read from git objects); the PM's tools, and execution, wait for it.
  const create = ctx.state.lastSeq <= 0;
  const opening = lazy(() => ctx.workspace.openRun(base, create));
  ctx.workspaceReady = opening;
  await ctx.mailbox.start(ctx);
  try {
    const reader = ctx.deps.store.repoReader(ctx.repo, base, ctx.workspace);
    ctx.testCommand ??= await detectTestCommandInGit(reader, ctx.deps.tools.environment(ctx.repo));
    await openMcp(ctx, opening);
    await loadRunRoles(ctx);
    await ensureContext(ctx, reader, ctx.state.started!.goal);
    const packet = await ctx.rec.ledger.getBlob(packetRefOf(ctx)).then((b) => b.toString('utf8'));
    const planned = ctx.mode.planSet ? await adoptPlan(ctx, ctx.mode.planSet) : await planRun(ctx, JSON.stringify(JSON.parse(packet), null, 1));
    await opening;
    if (planned.kind === 'awaiting_human' || planned.kind === 'aborted') outcome = planned;
    else if (planned.kind !== 'planned') outcome = { kind: 'error', message: planned.message, ...(planned.kind === 'failed' && planned.code !== undefined ? { code: planned.code } : {}) };
    else if (ctx.mode.planOnly) outcome = { kind: 'planned_only' };
    else {
      await settleMcp(ctx);
      outcome = await execute(ctx);
      if (outcome.kind === 'done' && judgeRun(ctx.state, await ctx.workspace.runHead()).needsFinalTestRun) await runFinalTests(ctx);
    }
  } catch (e) {
    const cancelled = ctx.cancel.request();
    if (cancelled !== null && ctx.deps.runtime.signal.aborted) outcome = { kind: 'cancelled', request: cancelled };
    else if (isAciaError(e) && e.code === 'BUDGET_EXCEEDED') outcome = { kind: 'budget_exhausted', message: e.message };
    else if (isAciaError(e) && e.code === 'ABORTED') outcome = { kind: 'aborted', message: 'interrupted' };
    else outcome = { kind: 'error', message: errorMessage(e), ...(isAciaError(e) ? { code: e.code } : {}) };
  }
  ctx.mailbox.stop();
  // finish() reads the run worktree: the checkout must have ended, however the run did.
  await Promise.resolve(opening).catch(() => undefined);
  return finish(ctx, outcome);
}

/**
 * How long planning waits for the MCP servers: they all start at once, and one still starting by then
 * (`npx -y` fetching a package) is left to finish while the PM plans; its tools reach the Dev and QA agents.
 */
const MCP_PLANNING_WAIT_MS = 10_000;

/** Starts the session's MCP servers and records what they offer, so replay can serve it without them. */
async function openMcp(ctx: RunContext, opening: PromiseLike<void>): Promise<void> {
  // The servers serve the run worktree: only a run with servers to start waits for its checkout before
  // the PM's call (the others check it out while that call is out: a large repository takes seconds).
  await recordMcp(ctx, await ctx.deps.tools.mcp.open(ctx.workspace.runWorktree, { waitMs: MCP_PLANNING_WAIT_MS, worktreeReady: opening }));
}

/** Before execution: the servers planning did not wait for have started or failed; the catalog is recorded again. */
async function settleMcp(ctx: RunContext): Promise<void> {
  const catalog = await ctx.deps.tools.mcp.settle();
  if (catalog) await recordMcp(ctx, catalog);
}

async function recordMcp(ctx: RunContext, catalog: McpCatalog): Promise<void> {
  if (catalog.servers.length === 0) return;
  const catalogRef = await ctx.rec.blob(canonicalJson(catalog));
  const servers = catalog.servers.map((s) => ({ name: s.name, source: s.source, error: s.error, tools: s.tools.length, ...(s.pending === true ? { pending: true } : {}) }));
  await ctx.rec.record('team', 'MCP_TOOLS', { catalogRef, servers });
}

function packetRefOf(ctx: RunContext): string {
  if (ctx.state.packetRef !== null) return ctx.state.packetRef;
  throw new AciaError('INTERNAL', 'no CONTEXT_BUILT entry');
}
