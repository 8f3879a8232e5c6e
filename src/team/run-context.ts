// What every part of a running run shares: its deps, ledger recorder, state, workspace, and the hooks
// wrapped around each model call (budget check or reservation before, LLM_CALL record and settlement after).
import { canonicalJson, sha256Hex } from '../core/acm/canonical-json.js';
import type { RequestDelta } from '../core/ledger/request-delta.js';
import { MAX_INLINE_RESPONSE } from '../core/ledger/inline-blobs.js';
import { requestDelta, type SentRequest } from './request-delta.js';
import type { PlanSet } from '../core/acm/contracts.js';
import type { LlmRequest, LlmResponse, Usage } from '../core/llm/types.js';
import type { InstructionFile } from '../agents/pm/context-packet.js';
import { BudgetExceededError, checkBudget, type BudgetAmount, type BudgetBreach, type BudgetReservation } from './budget.js';
import type { TeamDeps } from './deps.js';
import type { Recorder } from './recorder.js';
import type { RunState } from './run-state.js';
import type { RunWorkspace } from './workspace.js';
import type { Lazy } from './lazy.js';
import type { Mailbox } from './mailbox.js';
import type { RunRole, RunRoles } from './roles.js';
import type { CancelWatch } from './cancel.js';

export interface RunContext {
  deps: TeamDeps;
  repo: string;
  runId: string;
  runDir: string;
  rec: Recorder;
  state: RunState;
  workspace: RunWorkspace;
  /**
   * Settles when the run worktree is checked out; only the PM's tools run before that and wait on it.
   * The checkout starts when something waits for it, or just after the run's first model request goes
   * out (`start()`), so its processes overlap the model's answer instead of delaying the question.
   */
  workspaceReady: Lazy<void>;
  instructions: InstructionFile[];
  facts: Record<string, unknown>;
  testCommand: string | null;
  /** Wall-clock ms when this process started or resumed the run (budget minutes count from here). */
  sessionStartMs: number;
  /** Messages humans send the team while it runs (`acia say`). */
  mailbox: Mailbox;
  /** The roles agents run as: the built-ins, or those the run recorded (team/roles.ts). */
  roles: RunRoles;
  /** `acia plan` stops after planning; `acia exec` brings its own plan set. */
  mode: { planOnly: boolean; planSet: PlanSet | null; rebindContext: boolean };
  /** The session's watch for `acia cancel` (its signal is part of `deps.runtime.signal`); replay's is never cancelled. */
  cancel: CancelWatch;
}

/** The model-visible part of a request: what its hash and stored blob cover. */
export function visibleRequest(r: LlmRequest): Record<string, unknown> {
  return {
    model: r.model,
    system: r.system,
    tools: r.tools,
    messages: r.messages,
    maxTokens: r.maxTokens,
    ...(r.temperature === undefined ? {} : { temperature: r.temperature }),
  };
}

export function modelHooks(ctx: RunContext, actor: string, taskId: string | undefined, role: RunRole) {
  let started = 0;
  // One agent session makes one call at a time: at most one reservation is held between the hooks.
  let held: BudgetReservation | null = null;
  // The session's last recorded request: the next one is stored as a delta of it when it continues it.
  let sent: SentRequest | null = null;
  const model = role.model;
  return {
    beforeModelCall: async (request: LlmRequest): Promise<void> => {
      const estimate = model.estimate(model.id, request);
      // The role's own budget first (its role file): a role over it stops the run as the run's budget does.
      const roleBreach = ctx.state.budgetWaived ? null : roleBudgetBreach(ctx, role, estimate);
      if (roleBreach) throw new BudgetExceededError(roleBreach);
      const r = await reserveBudget(ctx, estimate);
      if ('breach' in r) throw new BudgetExceededError(r.breach);
      held = r.reservation;
      started = ctx.rec.now();
    },
    afterModelCall: async (request: LlmRequest, response: LlmResponse): Promise<void> => {
      const costUsd = model.costUsd(model.id, response.usage);
      const reservation = held;
      held = null;
      const previous = sent;
      // Not waited for: a crash in the next millisecond or two costs this call's record, not a wrong state.
      const requestHash = await recordModelCall(ctx, actor, reservation, {
        ...(taskId === undefined ? {} : { taskId }),
        caller: request.caller,
        model: response.model,
        usage: response.usage,
        costUsd,
        stopReason: response.stopReason,
        ...(ctx.roles.recorded ? { role: role.def.name } : {}),
        started,
        durable: false,
        blobs: () => ({ request: canonicalJson(visibleRequest(request)), delta: requestDelta(previous, request), response: canonicalJson(response) }),
      });
      sent = { request, hash: requestHash };
    },
    /** The call failed (or was interrupted): nothing was charged, so its reservation is dropped. */
    modelCallFailed: async (): Promise<void> => {
      const reservation = held;
      held = null;
      if (reservation) await releaseBudget(ctx, reservation);
    },
  };
}

/** A call that failed or was never made: what it held goes back. */
export async function releaseBudget(ctx: RunContext, reservation: BudgetReservation): Promise<void> {
  // A release that fails (the database is away) leaves the reservation to expire: it only holds budget back.
  await ctx.deps.fleet.budgetGate.release(reservation).catch(() => undefined);
}

/**
 * The budget check before a model call (ACIA's own, or an external agent's through the metering proxy):
 * the session's minutes here, then cost and tokens at the run's gate, which reserves the estimate (a
 * local run's holds it in this process; a fleet's counts every worker's calls). A waived budget is not
 * enforced, but is still reserved (and counted).
 */
export async function reserveBudget(ctx: RunContext, est: BudgetAmount): Promise<{ breach: BudgetBreach } | { reservation: BudgetReservation }> {
  const enforce = !ctx.state.budgetWaived;
  if (enforce) {
    const minutes = (ctx.deps.runtime.clock.now().getTime() - ctx.sessionStartMs) / 60_000;
    const breach = checkBudget({ maxMinutes: ctx.deps.config.budget.maxMinutes }, ctx.state, est, minutes);
    if (breach) return { breach };
  }
  return ctx.deps.fleet.budgetGate.reserve(ctx.runId, est, { enforce, spent: ctx.state });
}

/** A model call that answered, as its LLM_CALL entry tells it, with what `recordModelCall` needs to write it. */
interface AnsweredCall {
  taskId?: string;
  role?: string;
  caller: string;
  model: string;
  usage: Usage;
  costUsd: number | null;
  stopReason: string;
  /** `rec.now()` when the call went out. */
  started: number;
  /**
   * Waits until the entry is durable (`rec.record`) rather than queueing it (`rec.note`): the metering
   * proxy answers the agent before it records, so it must not leave a paid call to land after the task ended.
   */
  durable: boolean;
  /**
   * The request's canonical text and, when it continues the session's previous request, the delta it is
   * stored as instead of a blob (core/ledger/request-delta.ts); the response's blob content. Computed once
   * the write is under way.
   */
  blobs: () => { request: string; delta: RequestDelta | null; response: string };
}

/**
 * After a model call that answered: its request and response blobs and its LLM_CALL entry, then its
 * reservation settled at what it cost. Settled after the entry is written: a takeover that re-derives
 * the spend from the ledger in between counts the call twice (safe), never not at all. Settled even if
 * the write failed: the money is spent.
 */
export async function recordModelCall(ctx: RunContext, actor: string, reservation: BudgetReservation | null, c: AnsweredCall): Promise<string> {
  try {
    const { request, delta, response } = c.blobs();
    // A delta and a small response are in the entry, under the chain: no file for them, only their content addresses.
    const inline = response.length <= MAX_INLINE_RESPONSE;
    const [requestHash, responseRef] = await Promise.all([delta ? `sha256:${sha256Hex(request)}` : ctx.rec.blob(request), inline ? `sha256:${sha256Hex(response)}` : ctx.rec.blob(response)]);
    const data = {
      ...(c.taskId === undefined ? {} : { taskId: c.taskId }),
      caller: c.caller,
      model: c.model,
      requestHash,
      responseRef,
      usage: c.usage,
      costUsd: c.costUsd,
      stopReason: c.stopReason,
      durationMs: ctx.rec.now() - c.started,
      ...(c.role === undefined ? {} : { role: c.role }),
      ...(delta ? { request: delta } : {}),
      ...(inline ? { response } : {}),
    };
    await (c.durable ? ctx.rec.record(actor, 'LLM_CALL', data) : ctx.rec.note(actor, 'LLM_CALL', data));
    return requestHash;
  } finally {
    // After the entry: until then the call counts by its hold, from then on by what it cost.
    if (reservation) await ctx.deps.fleet.budgetGate.settle(reservation, { usd: c.costUsd, tokens: usageTokens(c.usage) });
  }
}

/** The limit of the role's own budget the next call would pass, or null (a role without a budget has none). */
function roleBudgetBreach(ctx: RunContext, role: RunRole, est: BudgetAmount): BudgetBreach | null {
  const limits = role.def.budget;
  if (!limits) return null;
  const spent = ctx.state.roleSpend.get(role.def.name) ?? { costUsd: 0, tokens: 0 };
  const breach = checkBudget(limits, spent, est, 0);
  return breach ? { ...breach, role: role.def.name } : null;
}

/** Tokens as the run's state counts them: every input and output token, cached or not. */
export function usageTokens(u: Usage): number {
  return u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens;
}
