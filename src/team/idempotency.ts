// Idempotency by key (ACM v0.5 §6.3 step 3, §5.5 `idemKey`): a task whose key resolves to that of a task
// of the plan that already completed does not run again; it takes the recorded result of the first, and
// the ledger says so (TASK_COMPLETED.reusedFrom). While the first is still running the second waits.
import type { RunContext } from './run-context.js';
import type { TaskState } from './run-state.js';
import type { TaskOutcome } from './task-common.js';
import { compensationRequired, effectiveIdemKey, policyCheck, preCheck } from './task-policy.js';

/** The task of the plan that already did `id`'s work under the same key and capability, if any. */
export function completedTwin(ctx: RunContext, id: string): [string, TaskState] | null {
  const t = ctx.state.tasks.get(id);
  if (!t || t.spec.idemKey === undefined) return null;
  const key = effectiveIdemKey(ctx, t.spec);
  for (const [other, o] of ctx.state.tasks) {
    if (other === id || o.status !== 'completed' || o.output === null || o.spec.capability !== t.spec.capability || o.spec.idemKey === undefined) continue;
    if (effectiveIdemKey(ctx, o.spec) === key) return [other, o];
  }
  return null;
}

/** Whether a task with `id`'s key and capability is running now: `id` waits for its result. */
export function twinRunning(ctx: RunContext, id: string, running: Iterable<string>): boolean {
  const t = ctx.state.tasks.get(id);
  if (!t || t.spec.idemKey === undefined) return false;
  const key = effectiveIdemKey(ctx, t.spec);
  for (const other of running) {
    const o = ctx.state.tasks.get(other);
    if (other !== id && o && o.spec.capability === t.spec.capability && o.spec.idemKey !== undefined && effectiveIdemKey(ctx, o.spec) === key) return true;
  }
  return false;
}

/**
 * The second task of a key: policy still surrounds it (it is a task of the plan), but nothing runs and
 * nothing is committed; its output is the first's, recorded with where it came from.
 */
export async function reuseResult(ctx: RunContext, id: string, twin: [string, TaskState]): Promise<TaskOutcome> {
  const t = ctx.state.tasks.get(id)!;
  const attempt = t.attempts + 1;
  await ctx.rec.record('team', 'TASK_STARTED', { taskId: id, attempt, capability: t.spec.capability });
  const denied = await preCheck(ctx, t.spec, attempt);
  if (denied) return denied;
  const post = await policyCheck(ctx, 'task.post', t.spec, []);
  const idemKey = effectiveIdemKey(ctx, t.spec);
  if (!post.allow && !t.policyOverride) return compensationRequired(ctx, id, attempt, post.reason);
  await ctx.rec.record('team', 'TASK_COMPLETED', {
    taskId: id,
    attempt,
    output: { ...twin[1].output },
    summary: `idempotent: ${twin[0]} already did this work under key ${idemKey}; its recorded result is reused, nothing ran again`,
    reusedFrom: twin[0],
    idemKey,
  });
  return { kind: 'completed' };
}
