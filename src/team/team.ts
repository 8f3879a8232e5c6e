// The Team: starts a run (or resumes one from its ledger), plans, executes, and ends it with a
// terminal reason, the manifest anchor and the wiki.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { Goal, PlanSet } from '../core/acm/contracts.js';
import { AciaError, errorMessage, isAciaError, type ErrorCode } from '../core/errors.js';
import type { EventDataOf, HumanAction, RunManifest, TerminalReason } from '../core/ledger/events.js';
import type { RunLedger } from '../core/ledger/types.js';
import type { RepoReader } from '../agents/pm/context-packet.js';
import type { TeamDeps } from './deps.js';
import { execute, type ExecOutcome } from './executor.js';
import { excludeAciaDir, Git, repoRoot, requireCommit, snapshotWorkingTree } from './git.js';
import { adoptPlan, ensureContext, planRun } from './planning.js';
import { Recorder } from './recorder.js';
import type { RunContext } from './run-context.js';
import { emptyRunState, foldRun, openEscalation, type RunState } from './run-state.js';
import { effectiveSource } from './scheduler.js';
import { Workspace } from './workspace.js';
import { applyLessons } from './lessons.js';
import { RunId } from '../core/acm/ids.js';
import { ensureAciaDir, guardAciaState } from './repo-guard.js';
import { checkRealDir, checkRegularOrMissing } from '../core/fs/no-follow.js';

import { detectTestCommand } from '../core/tools/run-tests.js';

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
  /** Set when the run waits for a human: how to go on. */
  resumeCommand?: string;
  /** When the run stopped on an error: its code, e.g. LLM_AUTH for credentials the API rejected. */
  errorCode?: ErrorCode;
}

export interface StartOptions {
  /** Any directory inside the repository. */
  dir: string;
  goal: string;
  /** Snapshot uncommitted changes into the run's base commit. */
  includeUncommitted?: boolean;
  /** Stop once the plan is chosen (`acia plan`). */
  planOnly?: boolean;
  /** Execute this saved plan set instead of asking the PM (`acia exec`). */
  planSet?: PlanSet;
}

export async function startRun(deps: TeamDeps, opts: StartOptions): Promise<RunResult> {
  const git = new Git(deps.clock);
  const repo = await repoRoot(git, opts.dir);
  const head = await requireCommit(git, repo);
  const base = opts.includeUncommitted ? await snapshotWorkingTree(git, repo, head, join(tmpdir(), `acia-index-${process.pid}-${Date.now()}`)) : head;
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
  ctx.mode = { planOnly: opts.planOnly ?? false, planSet: opts.planSet ?? null };
  const goal: Goal = { id: `goal-${runId}`, intent: opts.goal, constraints: {}, contextRequired: true };
  return beginRun(ctx, {
    goal,
    repo,
    baseCommit: base,
    baseBranch: await git.currentBranch(repo),
    runBranch: ctx.workspace.runBranch,
    model: deps.modelSpec,
    settings: { parallel: deps.config.parallel, maxIterations: deps.config.maxIterations, sandbox: deps.config.sandbox, budget: deps.config.budget, memoryLessons: deps.config.memoryLessons },
    aciaVersion: deps.aciaVersion,
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
  return beginRun(ctx, started);
}

export interface ResumeOptions {
  dir: string;
  runId?: string;
  answer?: string;
}

export async function resumeRun(deps: TeamDeps, opts: ResumeOptions): Promise<RunResult> {
  const git = new Git(deps.clock);
  const repo = await repoRoot(git, opts.dir);
  await guardAciaState(git, repo);
  const runId = opts.runId ?? (await latestUnfinishedRun(repo));
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
  if (state.completed?.reason === 'succeeded') {
    // A crash after RUN_COMPLETED but before the manifest: anchor the head now, redo nothing.
    await ledger.close();
    await saveManifest(ctx, 'succeeded');
    await deps.renderWiki(repo).catch(() => undefined);
    return resultOf(ctx, 'succeeded', `already finished: ${state.completed.message}`);
  }
  await ctx.rec.record('team', 'RUN_RESUMED', { pid: process.pid, ...(opts.answer === undefined ? {} : { answer: opts.answer }) });
  // The anchored head moves on: until this session ends the run is unfinished again.
  await saveManifest(ctx, 'running');
  const open = openEscalation(state);
  if (opts.answer !== undefined && open !== null) {
    const { action, text } = parseAnswer(opts.answer);
    await ctx.rec.record('human', 'HUMAN_RESPONSE', { escalationSeq: open.seq, action, ...(text === undefined ? {} : { text }) });
  }
  return drive(ctx, state.started.baseCommit);
}

/** `retry`, `skip`, `approve`, `abort` as the whole answer are actions; anything else is guidance. */
export function parseAnswer(answer: string): { action: HumanAction; text?: string } {
  const word = answer.trim().toLowerCase();
  if (word === 'retry' || word === 'skip' || word === 'approve' || word === 'abort') return { action: word };
  return { action: 'guidance', text: answer.trim() };
}

function makeContext(deps: TeamDeps, repo: string, runId: string, runDir: string, ledger: RunLedger, state: RunState, git: Git): RunContext {
  const listener = deps.onEvent;
  return {
    deps,
    repo,
    runId,
    runDir,
    rec: new Recorder(ledger, state, deps.clock, listener ? (entry) => listener({ kind: 'entry', entry }) : undefined),
    state,
    workspace: deps.workspace ? deps.workspace(repo, runId) : new Workspace(git, repo, runId),
    instructions: [],
    facts: {},
    testCommand: deps.config.testCommand ?? null,
    sessionStartMs: deps.clock.now().getTime(),
    mode: { planOnly: false, planSet: null },
  };
}

async function drive(ctx: RunContext, base: string): Promise<RunResult> {
  let outcome: DriveOutcome;
  try {
    await ctx.workspace.openRun(base, ctx.state.lastSeq <= 0);
    const git = new Git(ctx.deps.clock);
    ctx.testCommand ??= detectTestCommand({ fs: ctx.deps.fs, root: ctx.workspace.runWorktree });
    await ensureContext(ctx, gitReader(git, ctx.repo, base), ctx.state.started!.goal);
    const packet = await ctx.rec.ledger.getBlob(packetRefOf(ctx)).then((b) => b.toString('utf8'));
    const planned = ctx.mode.planSet ? await adoptPlan(ctx, ctx.mode.planSet) : await planRun(ctx, JSON.stringify(JSON.parse(packet), null, 1));
    if (planned.kind !== 'planned') outcome = { kind: 'error', message: planned.message };
    else if (ctx.mode.planOnly) outcome = { kind: 'planned_only' };
    else outcome = await execute(ctx);
  } catch (e) {
    if (isAciaError(e) && e.code === 'BUDGET_EXCEEDED') outcome = { kind: 'budget_exhausted', message: e.message };
    else if (isAciaError(e) && e.code === 'ABORTED') outcome = { kind: 'aborted', message: 'interrupted' };
    else outcome = { kind: 'error', message: errorMessage(e), ...(isAciaError(e) ? { code: e.code } : {}) };
  }
  return finish(ctx, outcome);
}

function packetRefOf(ctx: RunContext): string {
  for (const e of ctx.rec.ledger.entries()) if (e.type === 'CONTEXT_BUILT') return (e.data as { packetRef: string }).packetRef;
  throw new AciaError('INTERNAL', 'no CONTEXT_BUILT entry');
}

type DriveOutcome = ExecOutcome | { kind: 'error'; message: string; code?: ErrorCode } | { kind: 'planned_only' };

async function finish(ctx: RunContext, outcome: DriveOutcome): Promise<RunResult> {
  const { reason, message } = terminal(ctx, outcome);
  let headCommit: string | null = null;
  let filesChanged: string[] = [];
  try {
    headCommit = await ctx.workspace.runHead();
    filesChanged = await ctx.workspace.changedSinceBase(ctx.state.started!.baseCommit);
  } catch {
    // The run worktree may not exist when the run failed early; the result says so with nulls.
  }
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
    await ctx.rec.ledger.close();
    await ctx.workspace.close();
  }
  await saveManifest(ctx, reason);
  try {
    await ctx.deps.renderWiki(ctx.repo);
  } catch (e) {
    process.emitWarning(`wiki not rendered: ${errorMessage(e)}`);
  }
  const result = resultOf(ctx, reason, message);
  return outcome.kind === 'error' && outcome.code !== undefined ? { ...result, errorCode: outcome.code } : result;
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
    ...(reason === 'awaiting_human' || reason === 'budget_exhausted' || reason === 'aborted'
      ? { resumeCommand: `acia resume ${ctx.runId}${reason === 'awaiting_human' ? ' --answer "<guidance | retry | skip | approve | abort>"' : ''}` }
      : {}),
  };
}

function terminal(ctx: RunContext, outcome: DriveOutcome): { reason: TerminalReason; message: string } {
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
      const stuck = [...ctx.state.tasks.values()].filter((t) => t.status === 'pending' || t.status === 'running').map((t) => t.spec.id);
      if (stuck.length > 0) return { reason: 'error', message: `the executor stopped with tasks that never finished: ${stuck.join(', ')}` };
      const failedQa = [...ctx.state.tasks.entries()].find(([id, t]) => {
        const last = effectiveSource(ctx.state, id);
        return t.spec.capability.startsWith('qa.') && last?.status === 'failed';
      });
      if (failedQa) return { reason: 'verification_failed', message: `verification ${failedQa[0]} failed` };
      const failed = [...ctx.state.tasks.values()].find((t) => t.status === 'failed' && t.supersededBy === null);
      if (failed) return { reason: 'error', message: `task ${failed.spec.id} failed: ${failed.lastError?.message ?? ''}` };
      const done = [...ctx.state.tasks.values()].filter((t) => t.status === 'completed').length;
      const skippedQa = [...ctx.state.tasks.values()].filter((t) => t.status === 'skipped' && t.spec.capability.startsWith('qa.') && ctx.state.escalations.some((e) => e.taskId === t.spec.id && e.answer?.action === 'skip'));
      const note = skippedQa.length > 0 ? ` (verification ${skippedQa.map((t) => t.spec.id).join(', ')} skipped by a human)` : '';
      return { reason: 'succeeded', message: `${done} task(s) completed${note}` };
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

function gitReader(git: Git, repo: string, commit: string): RepoReader {
  return {
    listFiles: async () => {
      const r = await git.run(repo, ['ls-tree', '-r', '--name-only', commit]);
      return r.stdout === '' ? [] : r.stdout.split('\n');
    },
    readText: async (path, maxBytes) => {
      const r = await git.run(repo, ['show', `${commit}:${path}`], { allowFail: true });
      return r.exitCode === 0 ? r.stdout.slice(0, maxBytes) : null;
    },
    head: () => Promise.resolve(commit),
  };
}

export async function latestUnfinishedRun(repo: string): Promise<string> {
  const dir = join(repo, '.acia', 'runs');
  const names = await readdir(dir).catch(() => [] as string[]);
  const candidates: { id: string; startedAt: string }[] = [];
  for (const id of names) {
    try {
      const m = JSON.parse(await readFile(join(dir, id, 'manifest.json'), 'utf8')) as RunManifest;
      if (m.status !== 'succeeded') candidates.push({ id, startedAt: m.startedAt });
    } catch {
      continue;
    }
  }
  candidates.sort((a, b) => (a.startedAt < b.startedAt ? -1 : a.startedAt > b.startedAt ? 1 : a.id.localeCompare(b.id)));
  const last = candidates.at(-1);
  if (!last) throw new AciaError('RUN_NOT_FOUND', `no unfinished run in ${repo}`, { hint: 'start one with `acia run "<task>"`' });
  return last.id;
}

