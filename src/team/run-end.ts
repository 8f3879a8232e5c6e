// How a session ends: the terminal reason (judged once, by outcome.ts's rule), the lessons for the wiki,
// the bundle, the manifest and its anchor, and the result the CLI prints with its resume hints.
import { errorMessage, type ErrorCode } from '../core/errors.js';
import type { EventDataOf } from '../core/ledger/events.js';
import type { HumanAction, RunManifest, TerminalReason } from '../core/ledger/run-vocabulary.js';
import { lastOf } from '../core/ledger/entry.js';
import type { ExecOutcome } from './executor.js';
import { applyLessons } from './lessons.js';
import { judgeRun, outcomeMessage } from './outcome.js';
import type { RunContext } from './run-context.js';
import { openEscalation } from './run-state.js';
import { roleCosts, type RoleCost } from '../core/run/state.js';
import { runEndHooks } from './user-hooks.js';
import { cancelledMessage } from './cancel.js';

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
  /** Spend per role (the run's cost split by the role whose agent made each call). */
  roleCosts: RoleCost[];
  /** Set when the run can go on: a runnable command to continue it. */
  resumeCommand?: string;
  /** The answers `--answer` takes for the open question (guidance means free text). */
  answers?: HumanAction[];
  /** For a budget stop: the flag that raises the limit the run hit, e.g. `--max-tokens 30000`. */
  raiseLimit?: string;
  /** When the run stopped on an error: its code, e.g. LLM_AUTH for credentials the API rejected. */
  errorCode?: ErrorCode;
}

export type DriveOutcome = ExecOutcome | { kind: 'error'; message: string; code?: ErrorCode } | { kind: 'planned_only' };

export async function finish(ctx: RunContext, outcome: DriveOutcome): Promise<RunResult> {
  let headCommit: string | null = null;
  let filesChanged: string[] = [];
  try {
    headCommit = await ctx.workspace.runHead();
    filesChanged = await ctx.workspace.changedSinceBase(ctx.state.started!.baseCommit);
  } catch {
    // The run worktree may not exist when the run failed early; the result says so with nulls.
  }
  const { reason, message } = terminal(ctx, outcome, headCommit);
  if (outcome.kind === 'cancelled' && ctx.state.cancelRequested === null) await ctx.rec.record('human', 'CANCEL_REQUESTED', { ...outcome.request, wasRunning: true });
  try {
    await applyLessons(ctx, reason);
  } catch (e) {
    // Memory is a convenience for the next run; failing to update it never fails this one.
    process.emitWarning(`lessons not written to memory: ${errorMessage(e)}`);
  }
  let { reason: endReason, message: endMessage } = { reason, message };
  try {
    // Before RUN_COMPLETED, so the notification's decision is in the ledger it reports on.
    await runEndHooks(ctx, { reason, message, headCommit, filesChanged });
    const completed = (r: TerminalReason, m: string) =>
      ctx.rec.record('team', 'RUN_COMPLETED', {
        reason: r,
        message: m,
        runBranch: ctx.workspace.runBranch,
        headCommit,
        filesChanged,
        costUsd: ctx.state.costKnown ? round6(ctx.state.costUsd) : null,
        tokens: ctx.state.tokens,
        durationMs: ctx.deps.runtime.clock.now().getTime() - ctx.sessionStartMs,
      });
    await completed(reason, message);
    // The bundle is complete before the run is marked finished (ACM v0.5 §5.10). One that cannot be written
    // is no warning: the session ends in error, recorded after the verdict, and `acia resume` (or
    // `acia bundle`) builds it again; the verdict itself stays in the ledger.
    const failed = await writeBundle(ctx, manifestOf(ctx, reason));
    if (failed !== null) {
      endReason = 'error';
      endMessage = `the run ended ${reason} (${message}), but its replay bundle could not be written: ${failed}; \`acia resume ${ctx.runId}\` writes it and finishes the run`;
      await completed(endReason, endMessage);
    }
  } finally {
    // The request took effect (or the run ended first): the watch stops, and drops the request.
    ctx.cancel.stop();
    // Even when the ledger can no longer be written (a full disk), release its lock and file handle.
    await ctx.deps.tools.mcp.close();
    await ctx.rec.ledger.close();
    await ctx.workspace.close();
  }
  await saveManifest(ctx, endReason);
  try {
    await ctx.deps.store.renderWiki(ctx.repo, { runId: ctx.runId, entries: ctx.rec.ledger.entries() });
  } catch (e) {
    process.emitWarning(`wiki not rendered: ${errorMessage(e)}`);
  }
  const result = resultOf(ctx, endReason, endMessage);
  if (endReason !== reason) return { ...result, errorCode: 'LEDGER_IO' };
  return outcome.kind === 'error' && outcome.code !== undefined ? { ...result, errorCode: outcome.code } : result;
}

/**
 * The replay bundle, complete before the manifest marks the session's end (ACM 000 §17). Returns why it
 * could not be written, or null: the caller ends the session in error rather than calling it finished.
 */
export async function writeBundle(ctx: RunContext, manifest: RunManifest): Promise<string | null> {
  try {
    await ctx.deps.store.writeBundle(ctx.repo, ctx.runId, manifest, ctx.rec.ledger);
    return null;
  } catch (e) {
    return errorMessage(e);
  }
}

export function resultOf(ctx: RunContext, reason: TerminalReason, message: string): RunResult {
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
    roleCosts: roleCosts(ctx.state),
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
    const breach = lastOf(ctx.rec.ledger.entries(), 'BUDGET_EXCEEDED')?.data;
    const raise = breach === undefined ? undefined : raiseFlag(breach);
    return { resumeCommand: `${resume} --answer approve`, answers: ['approve', 'abort'], ...(raise === undefined ? {} : { raiseLimit: raise }) };
  }
  if ((reason === 'aborted' && !ctx.state.abortRequested) || reason === 'error') return { resumeCommand: resume };
  return {};
}

/** The flag that lets a budget-stopped run go on under a limit twice the one it hit. */
function raiseFlag(b: EventDataOf<'BUDGET_EXCEEDED'>): string | undefined {
  // A role's budget is its role file's, recorded with the run: no run flag raises it; approve goes on past it.
  if (b.role !== undefined) return undefined;
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
    case 'cancelled':
      return { reason: 'cancelled', message: cancelledMessage(outcome.request, true) };
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
export async function saveManifest(ctx: RunContext, status: RunManifest['status']): Promise<void> {
  await ctx.deps.store.writeManifest(ctx.runDir, manifestOf(ctx, status));
  await ctx.deps.store.anchor.write(ctx.runDir, ctx.runId, ctx.rec.ledger.head(), status);
}

export function manifestOf(ctx: RunContext, status: RunManifest['status']): RunManifest {
  const entries = ctx.rec.ledger.entries();
  const head = ctx.rec.ledger.head();
  return {
    runId: ctx.runId,
    status,
    goal: ctx.state.started?.goal.intent ?? '',
    head: status === 'running' ? null : head,
    startedAt: entries[0]?.ts ?? ctx.deps.runtime.clock.now().toISOString(),
    updatedAt: ctx.deps.runtime.clock.now().toISOString(),
    costUsd: ctx.state.costKnown ? round6(ctx.state.costUsd) : null,
    runBranch: ctx.workspace.runBranch,
  };
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

