// What every part of a running run shares: its deps, ledger recorder, state, workspace, and the hooks
// wrapped around each model call (budget check before, LLM_CALL record after).
import { canonicalJson } from '../core/acm/canonical-json.js';
import type { PlanSet } from '../core/acm/contracts.js';
import type { LlmRequest, LlmResponse } from '../core/llm/types.js';
import type { InstructionFile } from '../agents/pm/context-packet.js';
import { BudgetExceededError, checkBudget } from './budget.js';
import type { TeamDeps } from './deps.js';
import type { Recorder } from './recorder.js';
import type { RunState } from './run-state.js';
import type { RunWorkspace } from './workspace.js';

export interface RunContext {
  deps: TeamDeps;
  repo: string;
  runId: string;
  runDir: string;
  rec: Recorder;
  state: RunState;
  workspace: RunWorkspace;
  /** Settles when the run worktree is checked out; only the PM's tools run before that and wait on it. */
  workspaceReady: Promise<void>;
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
  return {
    beforeModelCall: (request: LlmRequest): Promise<void> => {
      if (!ctx.state.budgetWaived) {
        const est = ctx.deps.estimate(ctx.deps.model, request);
        const minutes = (ctx.deps.clock.now().getTime() - ctx.sessionStartMs) / 60_000;
        const breach = checkBudget(ctx.deps.config.budget, ctx.state, est, minutes);
        if (breach) return Promise.reject(new BudgetExceededError(breach));
      }
      started = ctx.rec.now();
      return Promise.resolve();
    },
    afterModelCall: async (request: LlmRequest, response: LlmResponse): Promise<void> => {
      // Both blobs at once: each waits on its own fsync.
      const [requestHash, responseRef] = await Promise.all([ctx.rec.blob(canonicalJson(visibleRequest(request))), ctx.rec.blob(canonicalJson(response))]);
      await ctx.rec.record(actor, 'LLM_CALL', {
        ...(taskId === undefined ? {} : { taskId }),
        caller: request.caller,
        model: response.model,
        requestHash,
        responseRef,
        usage: response.usage,
        costUsd: ctx.deps.costUsd(ctx.deps.model, response.usage),
        stopReason: response.stopReason,
        durationMs: ctx.rec.now() - started,
      });
    },
  };
}
