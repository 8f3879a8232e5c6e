// Tasks the team runs itself, with no agent: human.approve (a checkpoint a human answers) and pm.replan
// (a switch to the plan set's alternative). Policy surrounds them as it does every task (ACM 002 §14.1):
// task.pre before, task.post over the result, each recorded as a POLICY_DECISION.
import type { RunContext } from './run-context.js';
import { nextPlan, planDiff, replan } from './replan.js';
import type { TaskOutcome } from './task-common.js';
import { compensationRequired, policyCheck, preCheck } from './task-policy.js';

/** Asks the human the task's question, once policy allowed the task; the answer is recorded by the executor. */
export async function runApproveTask(ctx: RunContext, id: string): Promise<TaskOutcome> {
  const t = ctx.state.tasks.get(id)!;
  const attempt = t.attempts + 1;
  await ctx.rec.record('team', 'TASK_STARTED', { taskId: id, attempt, capability: t.spec.capability });
  const denied = await preCheck(ctx, t.spec, attempt);
  if (denied) return denied;
  const q = (t.spec.input as { question?: unknown }).question;
  return { kind: 'escalate', reason: 'human_approve', message: typeof q === 'string' ? q : `approve task ${id}?` };
}

/**
 * A human answered the checkpoint (the fold marked it passed): task.post judges the approval, then the
 * task completes with it as its output, or fails and goes where the plan routes a refused result.
 */
export async function finishApproval(ctx: RunContext, id: string): Promise<TaskOutcome> {
  const t = ctx.state.tasks.get(id)!;
  const post = await policyCheck(ctx, 'task.post', t.spec, []);
  if (!post.allow && !t.policyOverride) return compensationRequired(ctx, id, t.attempts, post.reason);
  await ctx.rec.record('team', 'TASK_COMPLETED', { taskId: id, attempt: t.attempts, output: t.output ?? { approved: true }, summary: 'approved by a human' });
  return { kind: 'completed' };
}

/**
 * Switches to the plan set's alternative. task.post judges the switch before it is applied (a switch
 * cannot be taken back): a denial leaves the plan as it is and fails the task.
 */
export async function runReplanTask(ctx: RunContext, id: string): Promise<TaskOutcome> {
  const t = ctx.state.tasks.get(id)!;
  const attempt = t.attempts + 1;
  await ctx.rec.record('team', 'TASK_STARTED', { taskId: id, attempt, capability: t.spec.capability });
  const denied = await preCheck(ctx, t.spec, attempt);
  if (denied) return denied;
  const current = ctx.state.plan!;
  const next = nextPlan(ctx);
  const post = await policyCheck(ctx, 'task.post', t.spec, []);
  if (!post.allow && !t.policyOverride) return compensationRequired(ctx, id, attempt, post.reason);
  const output = next === null ? { replanned: false } : { replanned: true, toPlanId: next.id, diff: planDiff(current, next) };
  await ctx.rec.record('team', 'TASK_COMPLETED', { taskId: id, attempt, output, summary: next === null ? 'no alternative plan left' : `switching to ${next.id}` });
  if (next !== null) await replan(ctx, `task ${id} asked for a re-plan`);
  return { kind: 'completed' };
}
