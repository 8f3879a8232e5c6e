// The executor: a loop over the folded run state. It records what the state implies (branch values,
// skips, fix tasks, re-plans, escalations), starts ready tasks up to --parallel, and stops when
// nothing is left to run or a human must answer.
import type { ErrorKind, TaskSpec } from '../core/acm/contracts.js';
import type { EscalationReason, HumanAction } from '../core/ledger/run-vocabulary.js';
import { AciaError, errorMessage } from '../core/errors.js';
import { failureExcerpt } from '../core/tools/test-failures.js';
import { BudgetExceededError } from './budget.js';
import type { RunContext } from './run-context.js';
import { openEscalation, wantsAnotherIteration, type TaskState } from './run-state.js';
import { failureRouted, guardScope, schedule } from './scheduler.js';
import type { TaskOutcome } from './task-common.js';
import { runQaTask } from './task-qa.js';
import { amendFromMessages } from './plan-amend.js';
import { announcedTasks, escalationHooks, taskCreatedHooks } from './user-hooks.js';
import { finishApproval, runApproveTask, runReplanTask } from './task-team.js';
import { replan } from './replan.js';
import { completedTwin, reuseResult, twinRunning } from './idempotency.js';
import type { CancelRequest } from './cancel.js';

export type ExecOutcome =
  | { kind: 'done' }
  | { kind: 'awaiting_human'; escalationSeq: number }
  | { kind: 'aborted'; message: string }
  | { kind: 'cancelled'; request: CancelRequest }
  | { kind: 'budget_exhausted'; message: string };

export const OPTIONS: Record<EscalationReason, HumanAction[]> = {
  fixes_exhausted: ['guidance', 'retry', 'skip', 'abort'],
  policy_denied: ['approve', 'retry', 'skip', 'abort'],
  budget_exceeded: ['approve', 'abort'],
  loop_detected: ['guidance', 'retry', 'skip', 'abort'],
  human_approve: ['approve', 'skip', 'abort'],
  merge_conflict: ['guidance', 'retry', 'skip', 'abort'],
  task_failed: ['guidance', 'retry', 'skip', 'abort'],
  environment_broken: ['retry', 'guidance', 'skip', 'abort'],
  // guidance: reject the plans with feedback the PM plans again from.
  plan_approval: ['approve', 'switch', 'edit', 'guidance', 'abort'],
};

export async function execute(ctx: RunContext): Promise<ExecOutcome> {
  const running = new Map<string, Promise<void>>();
  const resumed = new Set<string>();
  // Tasks whose task.created hooks have run, in an earlier session (recorded) or in this one.
  const announced = announcedTasks(ctx);
  // Interrupted tasks wait here for a free slot; they are no longer 'pending', so schedule() won't list them.
  const restart: string[] = [];
  let budgetError: BudgetExceededError | null = null;
  // Set from task promises; a holder object so the checks below see the writes made in callbacks.
  const failure: { fatal: Error | null } = { fatal: null };

  for (;;) {
    // A request to cancel is the safe point's first question: the tasks in flight were aborted with it
    // (their failures are its echo, not the run's outcome).
    const cancelled = ctx.cancel.request();
    if (cancelled !== null) {
      await Promise.allSettled(running.values());
      return { kind: 'cancelled', request: cancelled };
    }
    if (failure.fatal !== null && running.size === 0) throw failure.fatal;
    if (ctx.state.abortRequested) {
      await Promise.allSettled(running.values());
      return { kind: 'aborted', message: 'aborted by the human' };
    }
    if (ctx.deps.runtime.signal.aborted) {
      await Promise.allSettled(running.values());
      return { kind: 'aborted', message: 'interrupted' };
    }
    if (budgetError !== null && running.size === 0) {
      const err: BudgetExceededError = budgetError;
      budgetError = null;
      await ctx.rec.record('team', 'BUDGET_EXCEEDED', err.breach);
      await escalate(ctx, 'budget_exceeded', undefined, err.message);
      continue;
    }
    const open = openEscalation(ctx.state);
    if (open !== null) {
      if (running.size > 0) {
        await Promise.race(running.values());
        continue;
      }
      const asked = await askHuman(ctx, open.seq);
      if (!asked) {
        if (open.reason === 'budget_exceeded') return { kind: 'budget_exhausted', message: open.message };
        return { kind: 'awaiting_human', escalationSeq: open.seq };
      }
      continue;
    }
    // A message to the PM: no new task starts until it has answered, which it does once none runs.
    const pmDue = failure.fatal === null && budgetError === null ? ctx.mailbox.pmDue(ctx) : null;
    if (pmDue !== null) {
      if (running.size > 0) await Promise.race(running.values());
      else await amendFromMessages(ctx, pmDue);
      continue;
    }
    if (failure.fatal === null && budgetError === null && (await reconcile(ctx))) continue;
    await taskCreatedHooks(ctx, announced);

    const plan = ctx.state.plan!;
    const sched = schedule(ctx.state, plan);
    // A task left 'running' by a crash or an interrupt restarts from its last checkpoint (not while this
    // session is itself stopping for the budget or an error: the next session restarts it).
    const stopping = failure.fatal !== null || budgetError !== null;
    for (const [id, t] of ctx.state.tasks) {
      if (!stopping && t.status === 'running' && !running.has(id) && !resumed.has(id) && t.spec.capability !== 'human.approve') {
        resumed.add(id);
        await ctx.rec.record('team', 'COMPENSATION_APPLIED', {
          taskId: id,
          reason: 'interrupted attempt restarted from its last checkpoint',
          resetTo: t.lastCheckpoint ?? 'run head',
        });
        restart.push(id);
      }
    }
    if (failure.fatal === null && budgetError === null) {
      for (const id of [...restart, ...sched.ready]) {
        if (running.size >= ctx.deps.config.parallel) break;
        if (running.has(id)) continue;
        // A task sharing its idemKey with one running now waits for that result instead of redoing the work.
        if (twinRunning(ctx, id, running.keys())) continue;
        const at = restart.indexOf(id);
        if (at >= 0) restart.splice(at, 1);
        const p = runOne(ctx, id)
          .then(async (outcome) => handleOutcome(ctx, id, outcome))
          .catch((e: unknown) => {
            if (e instanceof BudgetExceededError) budgetError ??= e;
            else failure.fatal ??= e instanceof Error ? e : new Error(String(e));
          })
          .finally(() => running.delete(id));
        running.set(id, p);
      }
    }
    if (running.size === 0) {
      if (failure.fatal !== null) throw failure.fatal;
      if (budgetError !== null) continue;
      return { kind: 'done' };
    }
    await Promise.race(running.values());
  }
}

async function runOne(ctx: RunContext, id: string): Promise<TaskOutcome> {
  const t = ctx.state.tasks.get(id)!;
  const cap = t.spec.capability;
  const twin = completedTwin(ctx, id);
  if (twin !== null) return reuseResult(ctx, id, twin);
  if (cap.startsWith('dev.')) return ctx.deps.fleet.dispatchTask(ctx, id);
  if (cap.startsWith('qa.')) return runQaTask(ctx, id);
  if (cap === 'human.approve') return runApproveTask(ctx, id);
  if (cap === 'pm.replan') return runReplanTask(ctx, id);
  throw new AciaError('PLAN_INVALID', `no runner for capability ${cap}`);
}

async function handleOutcome(ctx: RunContext, id: string, outcome: TaskOutcome): Promise<void> {
  if (outcome.kind === 'escalate') await escalate(ctx, outcome.reason, id, outcome.message, outcome.lastFailure);
}

export async function escalate(ctx: RunContext, reason: EscalationReason, taskId: string | undefined, message: string, lastFailure?: string): Promise<void> {
  await ctx.rec.record('team', 'ESCALATION_REQUESTED', {
    reason,
    ...(taskId === undefined ? {} : { taskId }),
    message,
    ...(lastFailure === undefined ? {} : { lastFailure }),
    options: OPTIONS[reason],
  });
  await escalationHooks(ctx, { reason, taskId, message, options: OPTIONS[reason] });
}

async function askHuman(ctx: RunContext, seq: number): Promise<boolean> {
  const esc = ctx.state.escalations.find((e) => e.seq === seq)!;
  const answer = await ctx.deps.governance.escalator.ask({
    runId: ctx.runId,
    reason: esc.reason,
    taskId: esc.taskId,
    message: esc.message,
    lastFailure: await lastFailureText(ctx, esc.taskId),
    options: OPTIONS[esc.reason],
  });
  if (answer === null) return false;
  await recordAnswer(ctx, seq, answer.action, answer.text);
  return true;
}

/**
 * A human's answer, and when it carries guidance, the goal as amended by it: guidance changes what the
 * team is asked to do from here on, so the record says so in the spec's own terms (GOAL_AMENDED).
 */
export async function recordAnswer(ctx: RunContext, escalationSeq: number, action: HumanAction, text: string | undefined): Promise<void> {
  await ctx.rec.record('human', 'HUMAN_RESPONSE', { escalationSeq, action, ...(text === undefined ? {} : { text }) });
  if (text !== undefined && text.trim() !== '') {
    const esc = ctx.state.escalations.find((e) => e.seq === escalationSeq);
    await ctx.rec.record('human', 'GOAL_AMENDED', { by: 'human', delta: `guidance${esc?.taskId === undefined ? '' : ` for ${esc.taskId}`}: ${text.trim()}` });
  }
}

/** The failing part of the task's last test output (failure reports with head and tail), for the human and for fix tasks. */
export async function lastFailureText(ctx: RunContext, taskId: string | undefined): Promise<string | undefined> {
  const v = taskId === undefined ? undefined : ctx.state.tasks.get(taskId)?.lastVerification;
  if (!v || v.passed) return undefined;
  try {
    const body = JSON.parse((await ctx.rec.ledger.getBlob(v.outputRef)).toString('utf8')) as { forModel?: string };
    return failureExcerpt(body.forModel ?? '', { maxBytes: 6000 });
  } catch (e) {
    return `(test output unavailable: ${errorMessage(e)})`;
  }
}

/** Records what the state implies. Returns true when it recorded anything (the loop then re-reads). */
async function reconcile(ctx: RunContext): Promise<boolean> {
  const plan = ctx.state.plan!;
  let changed = false;
  // A human's skip is applied by the fold; it is written down here so every reader sees it as a skip.
  for (const [id, t] of ctx.state.tasks) {
    if (t.status === 'skipped' && t.skipCause === 'human' && !t.skipLogged) {
      await ctx.rec.record('team', 'TASK_SKIPPED', { taskId: id, reason: 'a human answered skip; the plan goes on past it', cause: 'human' });
      changed = true;
    }
    if (t.approvalToRecord) {
      await handleOutcome(ctx, id, await finishApproval(ctx, id));
      changed = true;
    }
  }
  if (changed) return true;
  const sched = schedule(ctx.state, plan);
  for (const edge of sched.guardsToRecord) {
    const scope = guardScope(ctx.state, ctx.facts, edge.from);
    let value = false;
    try {
      value = ctx.deps.governance.evalGuard(edge.guard!, scope);
    } catch {
      value = false;
    }
    const policy = scope.policy as { allow?: boolean; reason?: string };
    await ctx.rec.record('team', 'BRANCH_TAKEN', {
      from: edge.from,
      to: edge.to,
      guard: edge.guard!,
      value,
      ...(typeof policy.allow === 'boolean' ? { policy: { allow: policy.allow, ...(policy.reason === undefined ? {} : { reason: policy.reason }) } } : {}),
    });
    changed = true;
  }
  // Error-edge choices are decisions too: which failure went where.
  for (const edge of sched.errorRoutesToRecord) {
    await ctx.rec.record('team', 'BRANCH_TAKEN', { from: edge.from, to: edge.to, guard: `on_error == ${edge.onError!}`, value: true, onError: edge.onError! });
    changed = true;
  }
  if (changed) return true;
  for (const id of sched.skip) {
    const cause = sched.skipCauses.get(id) ?? 'upstream';
    const reason =
      cause === 'guard'
        ? 'no incoming edge was taken: the guards on the way here are false'
        : cause === 'join'
          ? 'it joins all its branches; some were taken, but guards closed others, so the join cannot be met'
          : 'a task before it failed or was skipped';
    await ctx.rec.record('team', 'TASK_SKIPPED', { taskId: id, reason, cause });
    changed = true;
  }
  if (changed) return true;
  for (const [id, t] of ctx.state.tasks) {
    if (t.status !== 'failed' || t.supersededBy !== null) continue;
    // An escalation after the failure settles it, unless the human asked for another fix iteration.
    if (ctx.state.escalations.some((e) => e.taskId === id && e.seq > t.failedSeq && !wantsAnotherIteration(e))) continue;
    if (failureRouted(ctx.state, plan, id)) continue;
    // The compensation the task's spec declares for this kind of failure becomes a task of the plan, reached by an error edge.
    const comp = t.spec.compensation;
    const kind = t.lastError?.kind;
    if (comp && (comp.triggerOn as string[]).includes(kind ?? '') && !ctx.state.tasks.has(`${id}-comp`)) {
      const task: TaskSpec = { id: `${id}-comp`, capability: comp.capability, title: `compensate ${id}`, input: { ...(comp.input ?? {}) }, verification: [], ...(comp.capabilityVersion === undefined ? {} : { capabilityVersion: comp.capabilityVersion }) };
      await ctx.rec.record('team', 'TASK_ADDED', { task, edges: [{ from: id, to: task.id, onError: kind as ErrorKind }], reason: 'compensation', parent: id, iteration: 0 });
      return true;
    }
    if (t.lastVerification && !t.lastVerification.passed && t.spec.capability.startsWith('qa.')) {
      await onVerificationFailed(ctx, id, t);
      return true;
    }
    if (t.lastError?.kind === 'COMPENSATION_REQUIRED') {
      // No compensation edge in the plan: a human decides (approve the change, retry, skip or abort).
      await escalate(ctx, 'policy_denied', id, `task ${id} needs compensation and the plan has no compensation edge for it: ${t.lastError.message}`);
      return true;
    }
    if (await replan(ctx, `task ${id} failed: ${t.lastError?.message ?? ''}`)) return true;
    await escalate(ctx, 'task_failed', id, `task ${id} failed: ${t.lastError?.message ?? 'unknown error'}`);
    return true;
  }
  return false;
}

/** The iterate loop: a failed verdict adds a dev.fix task and a re-verification, up to maxIterations. */
async function onVerificationFailed(ctx: RunContext, qaId: string, qa: TaskState): Promise<void> {
  const allowance = ctx.deps.config.maxIterations + ctx.state.extraIterations;
  const k = ctx.state.iterations + 1;
  if (ctx.state.iterations >= allowance) {
    if (await replan(ctx, `verification still failing after ${ctx.state.iterations} fix iterations`)) return;
    await escalate(ctx, 'fixes_exhausted', qaId, `tests still fail after ${ctx.state.iterations} fix iteration(s): ${qa.lastError?.message ?? ''}`, await lastFailureText(ctx, qaId));
    return;
  }
  const root = qaId.replace(/-r\d+$/, '');
  const fixId = `${root}-fix${k}`;
  const reId = `${root}-r${k}`;
  const failure = (await lastFailureText(ctx, qaId)) ?? qa.lastError?.message ?? 'tests failed';
  const guidance = qa.guidance ? ` Guidance from the human: ${qa.guidance}` : '';
  const fix: TaskSpec = {
    id: fixId,
    capability: 'dev.fix',
    title: `fix failing tests (iteration ${k})`,
    input: { instructions: `The project's tests fail after the team's changes. Find the cause and fix the code so they pass; do not weaken or delete tests.${guidance}`, failure },
    verification: [],
  };
  // A re-verification runs the tests again (qa.write_tests' tests are already merged); the failed task's
  // own verification expressions still have to hold on the replacement.
  const reverify: TaskSpec = {
    id: reId,
    capability: 'qa.verify',
    title: `re-verify after ${fixId}`,
    input: qa.spec.capability === 'qa.write_tests' ? { instructions: 'Run the project tests (including the tests written earlier in this run) and report the verdict.' } : qa.spec.input,
    verification: qa.spec.verification,
    ...(qa.spec.retry === undefined ? {} : { retry: qa.spec.retry }),
  };
  await ctx.rec.record('team', 'TASK_ADDED', { task: fix, edges: [], reason: 'fix', parent: qaId, iteration: k });
  await ctx.rec.record('team', 'TASK_ADDED', { task: reverify, edges: [{ from: fixId, to: reId }], reason: 'reverify', parent: qaId, replaces: qaId, iteration: k });
}
