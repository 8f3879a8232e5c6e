// The ACM artifacts a bundle derives from a ledger: the plan actually executed (after re-plans and the
// tasks the fix loop added), the spec of every task that ran, the capability map of the plan's version,
// and the plan again under the ACM spec's own field names.
import { PlanSet, type LedgerEntry, type Plan, type TaskSpec } from '../acm/contracts.js';
import { defaultCapabilityMap } from '../acm/capabilities.js';
import type { EventDataOf } from './events.js';

export interface ExecutedPlan {
  chosen: {
    planId: string | null;
    selection: unknown;
    /** Re-plans in order: which plan was abandoned for which, and why. */
    replans: EventDataOf<'REPLAN_TRIGGERED'>[];
    /** The plan in force at the end, with the tasks and edges added while it ran. */
    plan: Plan | null;
  };
  /** Every task that started, under any plan of the run, with the spec it ran with. */
  specs: Map<string, TaskSpec>;
}

export function executedPlan(entries: readonly LedgerEntry[]): ExecutedPlan {
  let planSet: PlanSet | null = null;
  let plan: Plan | null = null;
  let selection: unknown = null;
  const replans: EventDataOf<'REPLAN_TRIGGERED'>[] = [];
  const specs = new Map<string, TaskSpec>();
  const use = (id: string): void => {
    const found = planSet?.plans.find((p) => p.id === id);
    plan = found ? structuredClone(found) : null;
  };
  for (const e of entries) {
    switch (e.type) {
      case 'PLAN_PROPOSED': {
        const d = e.data as EventDataOf<'PLAN_PROPOSED'>;
        const parsed = PlanSet.safeParse(d.planSet);
        if (d.valid && parsed.success) planSet = parsed.data;
        break;
      }
      case 'PLAN_SELECTED':
        selection = e.data;
        use((e.data as EventDataOf<'PLAN_SELECTED'>).planId);
        break;
      case 'REPLAN_TRIGGERED': {
        const d = e.data as EventDataOf<'REPLAN_TRIGGERED'>;
        replans.push(d);
        use(d.toPlanId);
        break;
      }
      case 'TASK_ADDED': {
        const d = e.data as EventDataOf<'TASK_ADDED'>;
        const current = plan as Plan | null;
        if (current) {
          current.tasks.push(d.task);
          current.edges.push(...(d.edges ?? []));
        }
        break;
      }
      case 'TASK_STARTED': {
        const id = (e.data as EventDataOf<'TASK_STARTED'>).taskId;
        const spec = (plan as Plan | null)?.tasks.find((t) => t.id === id);
        if (spec) specs.set(id, spec);
        break;
      }
      default:
        break;
    }
  }
  const final = plan as Plan | null;
  return { chosen: { planId: final?.id ?? null, selection, replans, plan: final }, specs };
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
