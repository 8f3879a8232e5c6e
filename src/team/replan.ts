// Dynamic re-selection (ACM 002 §12): switching once to an unused alternative plan of the set, resetting
// the run branch to the base commit, and logging it as REPLAN_TRIGGERED with cause, scope and a diff.
import type { Plan } from '../core/acm/contracts.js';
import type { RunContext } from './run-context.js';

/** The alternative a re-plan would switch to, or null when there is none left (one re-plan per run). */
export function nextPlan(ctx: RunContext): Plan | null {
  const set = ctx.state.planSet;
  const current = ctx.state.plan;
  if (!set || !current || ctx.state.replans > 0) return null;
  return set.plans.find((p) => p.id !== current.id) ?? null;
}

/** How `next` differs from the plan in force, in one line. */
export function planDiff(current: Plan, next: Plan): string {
  const before = new Set(current.tasks.map((t) => `${t.capability}:${t.id}`));
  const after = new Set(next.tasks.map((t) => `${t.capability}:${t.id}`));
  const dropped = [...before].filter((x) => !after.has(x)).length;
  const added = [...after].filter((x) => !before.has(x)).length;
  return `${current.id} (${current.tasks.length} tasks, ${current.edges.length} edges) -> ${next.id} (${next.tasks.length} tasks, ${next.edges.length} edges): ${dropped} task(s) dropped, ${added} added; run branch reset to the base commit`;
}

/** Switches to the unused alternative plan, if any. Returns whether it switched. */
export async function replan(ctx: RunContext, cause: string): Promise<boolean> {
  const current = ctx.state.plan;
  const next = nextPlan(ctx);
  if (!current || !next) return false;
  const base = ctx.state.started!.baseCommit;
  await ctx.rec.record('team', 'COMPENSATION_APPLIED', { taskId: current.id, reason: `abandoning ${current.id}: run branch reset`, resetTo: base });
  await ctx.workspace.resetRun(base);
  await ctx.rec.record('pm', 'REPLAN_TRIGGERED', { cause, fromPlanId: current.id, toPlanId: next.id, scope: 'whole plan', diff: planDiff(current, next) });
  return true;
}
