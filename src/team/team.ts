// The Team: starts a run (or resumes one from its ledger), plans, executes, and ends it with a
// terminal reason, the manifest anchor and the wiki.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PlanSet, type ContextPacket, type Goal } from '../core/acm/contracts.js';
import { canonicalJson } from '../core/acm/canonical-json.js';
import { ACM_VERSION } from '../core/acm/acm-version.js';
import { AciaError, errorMessage, isAciaError, type ErrorCode } from '../core/errors.js';
import type { EventDataOf, HumanAction, RunManifest, TerminalReason } from '../core/ledger/events.js';
import type { RunLedger } from '../core/ledger/types.js';
import type { TeamDeps } from './deps.js';
import { execute, recordAnswer, type ExecOutcome } from './executor.js';
import { checkUntracked, excludeAciaDir, Git, repoRoot, requireCommit, snapshotWorkingTree } from './git.js';
import { adoptPlan, ensureContext, planRun } from './planning.js';
import { Recorder } from './recorder.js';
import type { RunContext } from './run-context.js';
import { emptyRunState, finishedReason, foldRun, openEscalation, type PendingEscalation, type RunState } from './run-state.js';
import { judgeRun, outcomeMessage } from './outcome.js';
import { runFinalTests } from './final-check.js';
import { Workspace } from './workspace.js';
import { applyLessons } from './lessons.js';
import { latestResumableRun } from './run-status.js';

export { latestResumableRun } from './run-status.js';
import { detectTestCommandInGit, gitReader } from './repo-reader.js';
import { RunId } from '../core/acm/ids.js';
import { ensureAciaDir, guardAciaState } from './repo-guard.js';
import { checkRealDir, checkRegularOrMissing } from '../core/fs/no-follow.js';

export interface RunResult {
  runId: string;
  reason: TerminalReason;
  message: string;
  runBranch: string;
  runDir: string;
  headCommit: string | null;
  filesChanged: string[];
  costUsd: number | null;
  tokens: number;
  /** Set when the run can go on: a runnable command to continue it. */
  resumeCommand?: string;
  /** The answers `--answer` takes for the open question (guidance means free text). */
  answers?: HumanAction[];
  /** For a budget stop: the flag that raises the limit the run hit, e.g. `--max-tokens 30000`. */
  raiseLimit?: string;
  /** When the run stopped on an error: its code, e.g. LLM_AUTH for credentials the API rejected. */
  errorCode?: ErrorCode;
}

export interface StartOptions {
  /** Any directory inside the repository. */
  dir: string;
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
}

/**
 * Starts a run: records RUN_STARTED in a new ledger under `.acia/runs/<runId>`, plans with the PM, executes the
 * plan in worktrees on branch `acia/<runId>` and ends with a terminal reason. Never touches the user's checkout.
 *
 * @param deps every outside dependency (model, clock, sandbox, ledger...); `buildDeps` makes the real ones.
 * @returns how the run ended; failures of the run itself are reported here, not thrown.
 * @throws AciaError NOT_A_GIT_REPO / REPO_NO_COMMITS before anything is written.
 */
export async function startRun(deps: TeamDeps, opts: StartOptions): Promise<RunResult> {
  const git = new Git(deps.clock);
  const repo = await repoRoot(git, opts.dir);
  const head = await requireCommit(git, repo);
  if (opts.includeUncommitted) await checkUntracked(git, repo, opts.forceUncommitted ?? false);
  const base = opts.includeUncommitted ? await snapshotWorkingTree(git, repo, head) : head;
  const now = deps.clock.now();
  const runId = deps.ids.runId(now);
  await excludeAciaDir(git, repo);
  await guardAciaState(git, repo);
  const runDir = ensureAciaDir(repo, 'runs', runId);
  // Anchored before the ledger exists, so a crash at any point leaves a run this user can resume.
  if (deps.anchor) await deps.anchor.write(runDir, runId, null, 'running');
  const ledger = await deps.openLedger(runDir, runId, { create: true });
  const state = emptyRunState();
  const ctx = makeContext(deps, repo, runId, runDir, ledger, state, git);
  ctx.mode = { planOnly: opts.planOnly ?? false, planSet: opts.planSet ?? null, rebindContext: opts.rebindContext ?? false };
  // A saved plan executes the goal it was planned for: same goal id, so an unchanged repository yields
  // the same Context Packet and the plan's contextRef can be checked against it.
  const goal: Goal = { id: opts.planSet?.goalId ?? opts.contextPacket?.goalId ?? `goal-${runId}`, intent: opts.goal, constraints: {}, contextRequired: true };
  const contextPacketRef = opts.contextPacket ? await ctx.rec.blob(canonicalJson(opts.contextPacket)) : undefined;
  const exec = opts.planSet ? { planSetRef: await ctx.rec.blob(canonicalJson(opts.planSet)), rebindContext: opts.rebindContext ?? false } : undefined;
  return beginRun(ctx, {
    goal,
    repo,
    baseCommit: base,
    baseBranch: await git.currentBranch(repo),
    runBranch: ctx.workspace.runBranch,
    model: deps.modelSpec,
    settings: { parallel: deps.config.parallel, maxIterations: deps.config.maxIterations, sandbox: deps.config.sandbox, budget: deps.config.budget, memoryLessons: deps.config.memoryLessons },
    aciaVersion: deps.aciaVersion,
    acmVersion: ACM_VERSION,
    ...(exec ? { exec } : {}),
    ...(opts.planOnly ? { planOnly: true } : {}),
    ...(contextPacketRef === undefined ? {} : { contextPacketRef }),
  });
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
  const ctx = makeContext(deps, repo, runId, ledger.dir, ledger, emptyRunState(), new Git(deps.clock));
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
  const git = new Git(deps.clock);
  const repo = await repoRoot(git, opts.dir);
  await guardAciaState(git, repo);
  const runId = opts.runId ?? (await latestResumableRun(repo));
  if (!RunId.safeParse(runId).success || runId.includes('..')) throw new AciaError('RUN_NOT_FOUND', `no run ${JSON.stringify(runId)} in ${repo}`, { hint: 'list runs with `acia runs`' });
  const runDir = join(repo, '.acia', 'runs', runId);
  const exists = await readdir(runDir).then(() => true, () => false);
  if (!exists) throw new AciaError('RUN_NOT_FOUND', `no run ${runId} in ${repo}`, { hint: 'list runs with `acia runs`' });
  checkRealDir(repo, runDir);
  for (const f of ['ledger.jsonl', 'manifest.json', 'blobs']) checkRegularOrMissing(join(runDir, f), f === 'blobs');
  if (deps.anchor) await deps.anchor.check(runDir, runId);
  const ledger = await deps.openLedger(runDir, runId, { create: false });
  const state = foldRun(ledger.entries());
  if (!state.started) {
    await ledger.close();
    throw new AciaError('RUN_NOT_FOUND', `run ${runId} was interrupted before it started (its ledger has no RUN_STARTED); there is nothing to resume`, {
      hint: 'start it again with `acia run "<task>"`',
    });
  }
  const ctx = makeContext(deps, repo, runId, runDir, ledger, state, git);
  ctx.mode = await recordedMode(ledger, state.started);
  const finished = finishedReason(state);
  if (finished !== null && state.completed !== null) {
    const anchored = await readManifest(runDir);
    if (anchored?.status !== state.completed.reason) {
      // A crash after RUN_COMPLETED but before the manifest: anchor the head now (bundle first), redo nothing.
      await ledger.close();
      await writeBundle(ctx, manifestOf(ctx, state.completed.reason));
      await saveManifest(ctx, state.completed.reason);
      await deps.renderWiki(repo).catch(() => undefined);
      return resultOf(ctx, state.completed.reason, `already finished: ${state.completed.message}`);
    }
    await ledger.close();
    throw new AciaError('RUN_FINISHED', `run ${runId} is finished (${finished}); there is nothing to resume`, {
      hint: `see it with \`acia show ${runId}\`, or start a new run with \`acia run "<task>"\``,
    });
  }
  const open = openEscalation(state);
  const answer = opts.answer === undefined ? null : checkAnswer(runId, open, opts.answer);
  if (answer !== null && open === null) {
    await ledger.close();
    throw new AciaError('USAGE', `run ${runId} is not waiting for an answer; resume it without --answer`);
  }
  const raised = answer === null && open?.reason === 'budget_exceeded' ? budgetRaised(ctx) : null;
  await ctx.rec.record('team', 'RUN_RESUMED', { pid: process.pid, ...(opts.answer === undefined ? {} : { answer: opts.answer }) });
  // The anchored head moves on: until this session ends the run is unfinished again.
  await saveManifest(ctx, 'running');
  if (answer !== null && open !== null) {
    await recordAnswer(ctx, open.seq, answer.action, answer.text);
  } else if (raised !== null && open !== null) {
    // Resuming with a higher limit answers the budget stop: the run goes on under the new limits.
    await ctx.rec.record('human', 'HUMAN_RESPONSE', { escalationSeq: open.seq, action: 'retry', text: raised });
  }
  return drive(ctx, state.started.baseCommit);
}

/** An `--answer` checked against the options the open escalation offered, before anything is recorded. */
function checkAnswer(runId: string, open: PendingEscalation | null, raw: string): { action: HumanAction; text?: string } {
  const answer = parseAnswer(raw);
  if (answer.action === 'guidance' && answer.text === '') throw new AciaError('USAGE', '--answer is empty; give guidance text or one of retry, skip, approve, abort');
  if (open === null || open.options.includes(answer.action)) return answer;
  const words = open.options.filter((o) => o !== 'guidance');
  const takes = `${open.options.includes('guidance') ? 'guidance text or ' : ''}one of: ${words.join(', ')}`;
  const given = answer.action === 'guidance' ? `guidance ("${answer.text ?? ''}")` : `"${answer.action}"`;
  throw new AciaError('USAGE', `run ${runId} waits on ${open.reason.replace(/_/g, ' ')}, which does not take ${given}; it takes ${takes}`);
}

/** When the run stopped on a budget limit that the limits given now no longer break, what changed; else null. */
function budgetRaised(ctx: RunContext): string | null {
  const breach = [...ctx.rec.ledger.entries()].reverse().find((e) => e.type === 'BUDGET_EXCEEDED')?.data as EventDataOf<'BUDGET_EXCEEDED'> | undefined;
  if (!breach) return null;
  const limits = ctx.deps.config.budget;
  switch (breach.limit) {
    case 'tokens':
      return limits.maxTokens === undefined || limits.maxTokens > breach.max ? `token limit raised from ${breach.max} to ${limits.maxTokens ?? 'none'}` : null;
    case 'cost':
      return limits.maxCostUsd === undefined || limits.maxCostUsd > breach.max ? `cost limit raised from $${breach.max} to ${limits.maxCostUsd === undefined ? 'none' : `$${limits.maxCostUsd}`}` : null;
    case 'minutes':
      // Minutes count per session, so a new session starts under the limit again.
      return `a new session of at most ${limits.maxMinutes ?? 'unlimited'} minutes`;
    case 'iterations':
      return null;
  }
}

async function readManifest(runDir: string): Promise<RunManifest | null> {
  try {
    return JSON.parse(await readFile(join(runDir, 'manifest.json'), 'utf8')) as RunManifest;
  } catch {
    return null;
  }
}

/** `retry`, `skip`, `approve`, `abort` as the whole answer are actions; anything else is guidance. */
export function parseAnswer(answer: string): { action: HumanAction; text?: string } {
  const word = answer.trim().toLowerCase();
  if (word === 'retry' || word === 'skip' || word === 'approve' || word === 'abort') return { action: word };
  return { action: 'guidance', text: answer.trim() };
}

/** A run context over an opened ledger and folded state (a session of the run, or one task of it run elsewhere). */
export function makeContext(deps: TeamDeps, repo: string, runId: string, runDir: string, ledger: RunLedger, state: RunState, git: Git): RunContext {
  const listener = deps.onEvent;
  return {
    deps,
    repo,
    runId,
    runDir,
    rec: new Recorder(ledger, state, deps.clock, listener ? (entry) => listener({ kind: 'entry', entry }) : undefined),
    state,
    workspace: deps.workspace ? deps.workspace(repo, runId) : new Workspace(git, repo, runId),
    workspaceReady: Promise.resolve(),
    instructions: [],
    facts: {},
    testCommand: deps.config.testCommand ?? null,
    sessionStartMs: deps.clock.now().getTime(),
    mode: { planOnly: false, planSet: null, rebindContext: false },
  };
}

async function drive(ctx: RunContext, base: string): Promise<RunResult> {
  let outcome: DriveOutcome;
  // The run worktree is checked out while the context is read from git objects and the PM's first call
  // goes out (a checkout of a large repository takes seconds); the PM's tools, and execution, wait for it.
  const opening = ctx.workspace.openRun(base, ctx.state.lastSeq <= 0);
  opening.catch(() => undefined); // awaited below; this only keeps an early failure from going unhandled
  ctx.workspaceReady = opening;
  try {
    const reader = ctx.deps.repoReader ? ctx.deps.repoReader(ctx.repo, base) : gitReader(new Git(ctx.deps.clock), ctx.repo, base);
    ctx.testCommand ??= await detectTestCommandInGit(reader);
    await openMcp(ctx, opening);
    await ensureContext(ctx, reader, ctx.state.started!.goal);
    const packet = await ctx.rec.ledger.getBlob(packetRefOf(ctx)).then((b) => b.toString('utf8'));
    const planned = ctx.mode.planSet ? await adoptPlan(ctx, ctx.mode.planSet) : await planRun(ctx, JSON.stringify(JSON.parse(packet), null, 1));
    await opening;
    if (planned.kind !== 'planned') outcome = { kind: 'error', message: planned.message, ...(planned.kind === 'failed' && planned.code !== undefined ? { code: planned.code } : {}) };
    else if (ctx.mode.planOnly) outcome = { kind: 'planned_only' };
    else {
      outcome = await execute(ctx);
      if (outcome.kind === 'done' && judgeRun(ctx.state, await ctx.workspace.runHead()).needsFinalTestRun) await runFinalTests(ctx);
    }
  } catch (e) {
    if (isAciaError(e) && e.code === 'BUDGET_EXCEEDED') outcome = { kind: 'budget_exhausted', message: e.message };
    else if (isAciaError(e) && e.code === 'ABORTED') outcome = { kind: 'aborted', message: 'interrupted' };
    else outcome = { kind: 'error', message: errorMessage(e), ...(isAciaError(e) ? { code: e.code } : {}) };
  }
  // finish() reads the run worktree: the checkout must have ended, however the run did.
  await opening.catch(() => undefined);
  return finish(ctx, outcome);
}

/** Starts the session's MCP servers and records what they offer, so replay can serve it without them. */
async function openMcp(ctx: RunContext, opening: Promise<void>): Promise<void> {
  if (!ctx.deps.mcp) return;
  // The servers serve the run worktree: only MCP runs wait for its checkout before the PM's call.
  await opening;
  const catalog = await ctx.deps.mcp.open(ctx.workspace.runWorktree);
  if (catalog.servers.length === 0) return;
  const catalogRef = await ctx.rec.blob(canonicalJson(catalog));
  const servers = catalog.servers.map((s) => ({ name: s.name, source: s.source, error: s.error, tools: s.tools.length }));
  await ctx.rec.record('team', 'MCP_TOOLS', { catalogRef, servers });
}

function packetRefOf(ctx: RunContext): string {
  for (const e of ctx.rec.ledger.entries()) if (e.type === 'CONTEXT_BUILT') return (e.data as { packetRef: string }).packetRef;
  throw new AciaError('INTERNAL', 'no CONTEXT_BUILT entry');
}

type DriveOutcome = ExecOutcome | { kind: 'error'; message: string; code?: ErrorCode } | { kind: 'planned_only' };

async function finish(ctx: RunContext, outcome: DriveOutcome): Promise<RunResult> {
  let headCommit: string | null = null;
  let filesChanged: string[] = [];
  try {
    headCommit = await ctx.workspace.runHead();
    filesChanged = await ctx.workspace.changedSinceBase(ctx.state.started!.baseCommit);
  } catch {
    // The run worktree may not exist when the run failed early; the result says so with nulls.
  }
  const { reason, message } = terminal(ctx, outcome, headCommit);
  try {
    await applyLessons(ctx, reason);
  } catch (e) {
    // Memory is a convenience for the next run; failing to update it never fails this one.
    process.emitWarning(`lessons not written to memory: ${errorMessage(e)}`);
  }
  try {
    await ctx.rec.record('team', 'RUN_COMPLETED', {
      reason,
      message,
      runBranch: ctx.workspace.runBranch,
      headCommit,
      filesChanged,
      costUsd: ctx.state.costKnown ? round6(ctx.state.costUsd) : null,
      tokens: ctx.state.tokens,
      durationMs: ctx.deps.clock.now().getTime() - ctx.sessionStartMs,
    });
  } finally {
    // Even when the ledger can no longer be written (a full disk), release its lock and file handle.
    await ctx.deps.mcp?.close();
    await ctx.rec.ledger.close();
    await ctx.workspace.close();
  }
  const manifest = manifestOf(ctx, reason);
  await writeBundle(ctx, manifest);
  await saveManifest(ctx, reason);
  try {
    await ctx.deps.renderWiki(ctx.repo);
  } catch (e) {
    process.emitWarning(`wiki not rendered: ${errorMessage(e)}`);
  }
  const result = resultOf(ctx, reason, message);
  return outcome.kind === 'error' && outcome.code !== undefined ? { ...result, errorCode: outcome.code } : result;
}

/**
 * The replay bundle, complete before the manifest marks the session's end (ACM 000 §17). A bundle that
 * cannot be written is reported, not fatal: the ledger it is built from is already safe, and
 * `acia bundle` can build it again.
 */
async function writeBundle(ctx: RunContext, manifest: RunManifest): Promise<void> {
  if (!ctx.deps.writeBundle) return;
  try {
    await ctx.deps.writeBundle(ctx.repo, ctx.runId, manifest);
  } catch (e) {
    process.emitWarning(`replay bundle not written: ${errorMessage(e)}`);
  }
}

function resultOf(ctx: RunContext, reason: TerminalReason, message: string): RunResult {
  const done = ctx.state.completed;
  return {
    runId: ctx.runId,
    reason,
    message,
    runBranch: ctx.workspace.runBranch,
    runDir: ctx.runDir,
    headCommit: done?.headCommit ?? null,
    filesChanged: done?.filesChanged ?? [],
    costUsd: ctx.state.costKnown ? round6(ctx.state.costUsd) : null,
    tokens: ctx.state.tokens,
    ...resumeHint(ctx, reason),
  };
}

/**
 * How to go on, for runs that can: the answers the open question takes, or the budget flag to raise.
 * A run a human aborted, and a finished one, get none.
 */
function resumeHint(ctx: RunContext, reason: TerminalReason): Pick<RunResult, 'resumeCommand' | 'answers' | 'raiseLimit'> {
  const resume = `acia resume ${ctx.runId}`;
  if (reason === 'awaiting_human') {
    const options = openEscalation(ctx.state)?.options ?? ['guidance', 'retry', 'skip', 'approve', 'abort'];
    const first = options.find((o) => o === 'retry' || o === 'approve') ?? options.find((o) => o !== 'guidance') ?? 'abort';
    return { resumeCommand: `${resume} --answer ${first}`, answers: options };
  }
  if (reason === 'budget_exhausted') {
    const breach = [...ctx.rec.ledger.entries()].reverse().find((e) => e.type === 'BUDGET_EXCEEDED')?.data as EventDataOf<'BUDGET_EXCEEDED'> | undefined;
    const raise = breach === undefined ? undefined : raiseFlag(breach);
    return { resumeCommand: `${resume} --answer approve`, answers: ['approve', 'abort'], ...(raise === undefined ? {} : { raiseLimit: raise }) };
  }
  if ((reason === 'aborted' && !ctx.state.abortRequested) || reason === 'error') return { resumeCommand: resume };
  return {};
}

/** The flag that lets a budget-stopped run go on under a limit twice the one it hit. */
function raiseFlag(b: EventDataOf<'BUDGET_EXCEEDED'>): string | undefined {
  switch (b.limit) {
    case 'tokens':
      return `--max-tokens ${Math.max(b.max * 2, Math.ceil(b.spent * 1.5))}`;
    case 'cost':
      return `--max-cost-usd ${Math.ceil(Math.max(b.max * 2, b.spent * 1.5) * 100) / 100}`;
    case 'minutes':
      return `--max-minutes ${b.max * 2}`;
    case 'iterations':
      return undefined;
  }
}

function terminal(ctx: RunContext, outcome: DriveOutcome, head: string | null): { reason: TerminalReason; message: string } {
  switch (outcome.kind) {
    case 'planned_only':
      return { reason: 'succeeded', message: `planned only: ${ctx.state.plan?.id ?? '?'} chosen, nothing executed` };
    case 'awaiting_human': {
      const esc = ctx.state.escalations.find((e) => e.seq === outcome.escalationSeq);
      return { reason: 'awaiting_human', message: esc?.message ?? 'waiting for a human answer' };
    }
    case 'aborted':
      return { reason: 'aborted', message: outcome.message };
    case 'budget_exhausted':
      return { reason: 'budget_exhausted', message: outcome.message };
    case 'error':
      return { reason: 'error', message: outcome.message };
    case 'done': {
      const o = judgeRun(ctx.state, head);
      return { reason: o.verdict, message: outcomeMessage(ctx.state, o, head) };
    }
  }
}

/** The manifest next to the ledger, then the anchor in the user's state directory. */
async function saveManifest(ctx: RunContext, status: RunManifest['status']): Promise<void> {
  await ctx.deps.writeManifest(ctx.runDir, manifestOf(ctx, status));
  if (ctx.deps.anchor) await ctx.deps.anchor.write(ctx.runDir, ctx.runId, ctx.rec.ledger.head(), status);
}

function manifestOf(ctx: RunContext, status: RunManifest['status']): RunManifest {
  const entries = ctx.rec.ledger.entries();
  const head = ctx.rec.ledger.head();
  return {
    runId: ctx.runId,
    status,
    goal: ctx.state.started?.goal.intent ?? '',
    head: status === 'running' ? null : head,
    startedAt: entries[0]?.ts ?? ctx.deps.clock.now().toISOString(),
    updatedAt: ctx.deps.clock.now().toISOString(),
    costUsd: ctx.state.costKnown ? round6(ctx.state.costUsd) : null,
    runBranch: ctx.workspace.runBranch,
  };
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

