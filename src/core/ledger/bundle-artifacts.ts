// The ACM artifacts a bundle derives from a ledger: the plan actually executed (after re-plans and the
// tasks the fix loop added), the spec of every task that ran, the capability map of the plan's version,
// and the plan again under the ACM spec's own field names.
import type { Plan, TaskSpec } from '../acm/contracts.js';
import { defaultCapabilityMap } from '../acm/capabilities.js';
import { foldRun } from '../run/reducer.js';
import type { LedgerEntry } from './entry.js';
import type { EventDataOf } from './events.js';

export interface ExecutedPlan {
  chosen: {
    planId: string | null;
    selection: EventDataOf<'PLAN_SELECTED'> | null;
    /** Re-plans in order: which plan was abandoned for which, and why. */
    replans: EventDataOf<'REPLAN_TRIGGERED'>[];
    /** The plan in force at the end, with the tasks and edges added while it ran. */
    plan: Plan | null;
  };
  /** Every task that started, under any plan of the run, with the spec it ran with. */
  specs: Map<string, TaskSpec>;
}

/** Read from the run state the one reducer folds (core/run), as the wiki, ACP and resume read it. */
export function executedPlan(entries: readonly LedgerEntry[]): ExecutedPlan {
  const s = foldRun(entries);
  const specs = new Map<string, TaskSpec>();
  for (const [id, t] of [...s.retired, ...s.tasks]) if (t.attempts > 0) specs.set(id, t.spec);
  const selection = s.selection ? { planId: s.selection.planId, method: s.selection.method, rationale: s.selection.rationale, alternatives: s.selection.alternatives } : null;
  return { chosen: { planId: s.plan?.id ?? null, selection, replans: s.replanned, plan: s.plan }, specs };
}

/** The capability map of the referenced version, when it is the one this build ships. */
export function capabilityMapOf(version: string | null): unknown {
  if (version === defaultCapabilityMap.version) return defaultCapabilityMap;
  return { version, capabilities: null, note: `capability map ${String(version)} is not the one this acia ships (${defaultCapabilityMap.version})` };
}

/** The plan under the ACM v0.5 spec's field names (snake_case error edges, context_ref, task specs with capabilityRef). */
export function planInSpecNames(plan: Plan): Record<string, unknown> {
  return {
    id: plan.id,
    goal_id: plan.goalId,
    contextRef: plan.contextRef,
    capability_map_version: plan.capabilityMapVersion,
    rationale: plan.rationale,
    tasks: plan.tasks.map((t) => ({
      id: t.id,
      capabilityRef: `${t.capability}@${plan.capabilityMapVersion}`,
      ...(t.title === undefined ? {} : { title: t.title }),
      input: t.input,
      ...(t.retry === undefined ? {} : { retryPolicy: t.retry }),
      ...(t.idemKey === undefined ? {} : { idemKey: t.idemKey }),
      verification: t.verification,
      ...(t.policyInput === undefined ? {} : { policyInput: t.policyInput }),
    })),
    edges: plan.edges.map((e) => ({ from: e.from, to: e.to, ...(e.guard === undefined ? {} : { guard: e.guard }), ...(e.onError === undefined ? {} : { on_error: e.onError }) })),
    join: plan.joins.map((j) => ({ task: j.task, type: j.mode, wait_for: j.waitFor })),
  };
}
