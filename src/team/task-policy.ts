// The policy decision point around every task (ACM 002 §14.1, v0.5 §6.3): the request each task exposes,
// its pre and post hooks, the limits an allow carries, and where a deny or a failure goes — along the
// plan's typed error edge when it declares one, to a human only when it does not.
import type { ErrorKind, TaskSpec } from '../core/acm/contracts.js';
import { IdemKeyError, resolveIdemKey } from '../core/acm/idem-key.js';
import { AciaError } from '../core/errors.js';
import type { EscalationReason } from '../core/ledger/run-vocabulary.js';
import type { PolicyDecision, PolicyHook, PolicyRequest } from '../core/policy/policy.js';
import type { RunContext } from './run-context.js';
import { routesError } from './scheduler.js';
import type { TaskOutcome } from './task-common.js';
import { creationDenied, policyPointHooks } from './user-hooks.js';
import type { TaskWorktree } from './workspace.js';

/** The key a task runs under: its declared `idemKey` resolved over the run, or one unique to the task. */
export function effectiveIdemKey(ctx: RunContext, spec: TaskSpec): string {
  try {
    return resolveIdemKey(spec.idemKey, {
      goalId: ctx.state.started?.goal.id ?? ctx.runId,
      planId: ctx.state.plan?.id ?? '',
      taskId: spec.id,
      facts: ctx.facts,
    });
  } catch (e) {
    if (e instanceof IdemKeyError) throw new AciaError('PLAN_INVALID', `task ${spec.id}: ${e.detail}`);
    throw e;
  }
}

/**
 * Asks the PDP and records request and response as one POLICY_DECISION; once it allows, the user's hooks
 * at the same point are more evaluators, each recorded (`hooks: false`: they already ran, in an agent's
 * session that judged its result).
 */
export async function policyCheck(ctx: RunContext, hook: PolicyHook, spec: TaskSpec | null, filesChanged?: string[], o: { hooks?: boolean } = {}): Promise<PolicyDecision> {
  // A task its creation's hooks denied does not start; that denial is recorded already.
  const created = hook === 'task.pre' && spec ? creationDenied(ctx, spec.id) : null;
  if (created) return { allow: false, reason: created.reason };
  const plan = ctx.state.plan;
  const elapsedSec = Math.round((ctx.deps.runtime.clock.now().getTime() - ctx.sessionStartMs) / 1000);
  const request: PolicyRequest = {
    action: hook,
    ...(spec
      ? {
          task: {
            id: spec.id,
            capability: spec.capability,
            input: spec.input,
            idemKey: effectiveIdemKey(ctx, spec),
            ...(spec.policyInput === undefined ? {} : { policyInput: spec.policyInput }),
          },
        }
      : {}),
    goal: { id: ctx.state.started?.goal.id ?? ctx.runId },
    plan: {
      id: plan?.id ?? '',
      contextRef: plan?.contextRef ?? ctx.state.contextRef ?? '',
      capabilityMapVersion: plan?.capabilityMapVersion ?? '',
      taskCount: plan?.tasks.length ?? 0,
    },
    run: { engine: 'acia', runId: ctx.runId },
    metrics: { costUsd: ctx.state.costUsd, elapsedSec, cost_usd: ctx.state.costUsd, elapsed_sec: elapsedSec },
    ...(filesChanged ? { filesChanged } : {}),
  };
  const response = await ctx.deps.governance.policy.evaluate(request);
  const limits = response.allow ? cleanLimits(response.limits) : undefined;
  const recorded: PolicyDecision = { allow: response.allow, ...(response.reason === undefined ? {} : { reason: response.reason }), ...(limits ? { limits } : {}) };
  await ctx.rec.record('policy', 'POLICY_DECISION', { hook, ...(spec ? { taskId: spec.id } : {}), request, response: { ...recorded } });
  if (!recorded.allow || o.hooks === false) return recorded;
  const hooks = await policyPointHooks(ctx, hook, spec, filesChanged);
  return hooks.allow ? recorded : { allow: false, reason: `hook ${hooks.hook}: ${hooks.reason}` };
}

/** A change policy or a hook denied: the worktree goes back to the attempt's base, and the task needs compensation. */
export async function undoChange(ctx: RunContext, taskId: string, attempt: number, wt: TaskWorktree, reason: string | undefined): Promise<TaskOutcome> {
  await ctx.workspace.prepareTask(taskId, wt.baseCommit);
  await ctx.rec.record('team', 'COMPENSATION_APPLIED', { taskId, reason: `policy: ${reason ?? 'denied'}`, resetTo: wt.baseCommit });
  return compensationRequired(ctx, taskId, attempt, reason);
}

/** Only well-formed limits are kept (a PDP is outside code): positive whole numbers. */
function cleanLimits(l: PolicyDecision['limits']): PolicyDecision['limits'] | undefined {
  if (l === undefined) return undefined;
  const ok = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
  const out = { ...(ok(l.timeoutMs) && l.timeoutMs > 0 ? { timeoutMs: l.timeoutMs } : {}), ...(ok(l.retries) ? { retries: l.retries } : {}) };
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * A recorded failure the plan may route: when it declares an error edge of `kind` out of the task, the
 * executor follows it (`failed`); otherwise a human is asked (`escalation`). FATAL errors halt the plan
 * unless an alternate branch is defined (v0.5 §6.4), and a defined one is always taken.
 */
export function routeOrEscalate(ctx: RunContext, taskId: string, kind: ErrorKind, message: string, escalation: Omit<TaskOutcome & { kind: 'escalate' }, 'kind'>): TaskOutcome {
  const plan = ctx.state.plan;
  if (plan && routesError(ctx.state, plan, taskId, kind)) return { kind: 'failed', errorKind: kind, message };
  // A compensation the task's own spec declares for this kind: the executor adds it to the plan and routes there.
  if (ctx.state.tasks.get(taskId)?.spec.compensation?.triggerOn.includes(kind)) return { kind: 'failed', errorKind: kind, message };
  return { kind: 'escalate', ...escalation };
}

/**
 * The `task.pre` hook. Null when the task may run (allowed, or a human overrode an earlier denial). A
 * denial fails the task with FATAL_ERROR when the plan routes that failure; otherwise a human is asked.
 */
export async function preCheck(ctx: RunContext, spec: TaskSpec, attempt: number): Promise<TaskOutcome | null> {
  const pre = await policyCheck(ctx, 'task.pre', spec);
  if (pre.allow || ctx.state.tasks.get(spec.id)?.policyOverride) return null;
  const message = `policy denied ${spec.id} before it ran: ${pre.reason ?? 'no reason given'}`;
  const plan = ctx.state.plan;
  if (plan && routesError(ctx.state, plan, spec.id, 'FATAL_ERROR')) {
    await ctx.rec.record('team', 'TASK_FAILED', { taskId: spec.id, attempt, errorKind: 'FATAL_ERROR', message });
    return { kind: 'failed', errorKind: 'FATAL_ERROR', message };
  }
  return { kind: 'escalate', reason: 'policy_denied', message: `policy denied ${spec.id}: ${pre.reason ?? 'no reason given'}` };
}

/**
 * A result `task.post` denied (already undone by the caller): the task fails with COMPENSATION_REQUIRED.
 * When the plan routes that failure along a compensation edge the executor follows it; only without one
 * is a human asked.
 */
export async function compensationRequired(ctx: RunContext, taskId: string, attempt: number, reason: string | undefined): Promise<TaskOutcome> {
  const message = `policy denied the change: ${reason ?? 'no reason given'}`;
  await ctx.rec.record('team', 'TASK_FAILED', { taskId, attempt, errorKind: 'COMPENSATION_REQUIRED', message });
  return routeOrEscalate(ctx, taskId, 'COMPENSATION_REQUIRED', message, { reason: 'policy_denied', message: `policy denied the changes of ${taskId}: ${reason ?? 'no reason given'}` });
}

/** Records a FATAL failure (loop, merge conflict, broken environment) and routes it, or asks a human. */
export async function fatal(ctx: RunContext, taskId: string, attempt: number, message: string, reason: EscalationReason, humanMessage: string, lastFailure?: string): Promise<TaskOutcome> {
  await ctx.rec.record('team', 'TASK_FAILED', { taskId, attempt, errorKind: 'FATAL_ERROR', message });
  return routeOrEscalate(ctx, taskId, 'FATAL_ERROR', message, { reason, message: humanMessage, ...(lastFailure === undefined ? {} : { lastFailure }) });
}

/** The attempts a task may make: its retry policy, capped by the retries the last allow granted. */
export function attemptsAllowed(ctx: RunContext, spec: TaskSpec, declared: number): number {
  const retries = ctx.state.tasks.get(spec.id)?.limits?.retries;
  return retries === undefined ? declared : Math.min(declared, retries + 1);
}
