// What every part of a running run shares: its deps, ledger recorder, state, workspace, and the hooks
// wrapped around each model call (budget check or reservation before, LLM_CALL record and settlement after).
import { canonicalJson } from '../core/acm/canonical-json.js';
import type { PlanSet } from '../core/acm/contracts.js';
import type { LlmRequest, LlmResponse, Usage } from '../core/llm/types.js';
import type { InstructionFile } from '../agents/pm/context-packet.js';
import { BudgetExceededError, checkBudget, type BudgetReservation } from './budget.js';
import type { TeamDeps } from './deps.js';
import type { Recorder } from './recorder.js';
import type { RunState } from './run-state.js';
import type { RunWorkspace } from './workspace.js';
import type { Lazy } from './lazy.js';

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
  /** `acia plan` stops after planning; `acia exec` brings its own plan set. */
  mode: { planOnly: boolean; planSet: PlanSet | null; rebindContext: boolean };
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

export function modelHooks(ctx: RunContext, actor: string, taskId: string | undefined) {
  let started = 0;
  // One agent session makes one call at a time: at most one reservation is held between the hooks.
  let held: BudgetReservation | null = null;
  const gate = ctx.deps.fleet?.budgetGate;
  return {
    beforeModelCall: async (request: LlmRequest): Promise<void> => {
      const enforce = !ctx.state.budgetWaived;
      const est = ctx.deps.model.estimate(ctx.deps.model.id, request);
      if (enforce) {
        const minutes = (ctx.deps.runtime.clock.now().getTime() - ctx.sessionStartMs) / 60_000;
        // With a shared gate, cost and tokens are the gate's: this process's fold does not see the others' calls.
        const limits = gate ? { maxMinutes: ctx.deps.config.budget.maxMinutes } : ctx.deps.config.budget;
        const breach = checkBudget(limits, ctx.state, est, minutes);
        if (breach) throw new BudgetExceededError(breach);
      }
      if (gate) {
        const r = await gate.reserve(ctx.runId, est, { enforce });
        if ('breach' in r) throw new BudgetExceededError(r.breach);
        held = r.reservation;
      }
      started = ctx.rec.now();
    },
    afterModelCall: async (request: LlmRequest, response: LlmResponse): Promise<void> => {
      const costUsd = ctx.deps.model.costUsd(ctx.deps.model.id, response.usage);
      try {
        const [requestHash, responseRef] = await Promise.all([ctx.rec.blob(canonicalJson(visibleRequest(request))), ctx.rec.blob(canonicalJson(response))]);
        // Not waited for: a crash in the next millisecond or two costs this call's record, not a wrong state.
        await ctx.rec.note(actor, 'LLM_CALL', {
          ...(taskId === undefined ? {} : { taskId }),
          caller: request.caller,
          model: response.model,
          requestHash,
          responseRef,
          usage: response.usage,
          costUsd,
          stopReason: response.stopReason,
          durationMs: ctx.rec.now() - started,
        });
      } finally {
        // Settled after the entry is written: a takeover that re-derives the spend from the ledger in
        // between counts the call twice (safe), never not at all. The money is spent even if the write failed.
        const reservation = held;
        held = null;
        if (gate && reservation) await gate.settle(reservation, { usd: costUsd, tokens: usageTokens(response.usage) });
      }
    },
    /** The call failed (or was interrupted): nothing was charged, so its reservation is dropped. */
    modelCallFailed: async (): Promise<void> => {
      const reservation = held;
      held = null;
      // A release that fails (the database is away) leaves the reservation to expire: it only holds budget back.
      if (gate && reservation) await gate.release(reservation).catch(() => undefined);
    },
  };
}

/** Tokens as the run's state counts them: every input and output token, cached or not. */
export function usageTokens(u: Usage): number {
  return u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens;
}
