// Reads plans written the way the ACM texts write them (seed 000 §3, seed 002 §15, the v0.5 examples)
// and maps them onto ACIA's contracts: `on_error` for `onError`, a plan-level `join: all|any`, a plan's
// `alternatives[]`, `capabilityRef: name@version`, `retryPolicy`, snake_case references. What cannot be
// mapped is left for the strict schemas to reject with its JSON path.
import type { Problem } from './zod-paths.js';

type Obj = Record<string, unknown>;

export interface SpecMapping<T = unknown> {
  value: T;
  /** One line per name the document used that ACIA spells differently, e.g. `$.edges[0].on_error -> onError`. */
  mapped: string[];
  /** Spec constructs that are present but wrong (an alternative naming no plan of the set). */
  errors: Problem[];
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function rename(o: Obj, from: string, to: string, path: string, mapped: string[]): void {
  if (!Object.hasOwn(o, from) || Object.hasOwn(o, to)) return;
  o[to] = o[from];
  delete o[from];
  mapped.push(`${path}.${from} -> ${to}`);
}

function mapTask(t: unknown, path: string, mapVersion: unknown, mapped: string[]): unknown {
  if (!isObj(t)) return t;
  const task: Obj = { ...t };
  if (!Object.hasOwn(task, 'capability') && typeof task.capabilityRef === 'string') {
    // name@version: the version must be the plan's capability map (checked by validation of the plan).
    const ref = task.capabilityRef;
    const at = ref.indexOf('@');
    task.capability = at === -1 ? ref : ref.slice(0, at);
    delete task.capabilityRef;
    mapped.push(`${path}.capabilityRef -> capability`);
    if (at !== -1 && typeof mapVersion === 'string' && ref.slice(at + 1) !== mapVersion) {
      task.capability = ref; // leave it unknown: validation names it at its path
    }
  }
  rename(task, 'retryPolicy', 'retry', path, mapped);
  rename(task, 'idem_key', 'idemKey', path, mapped);
  rename(task, 'policy_input', 'policyInput', path, mapped);
  if (!Object.hasOwn(task, 'input')) task.input = {};
  return task;
}

/** Maps one plan written with the spec's names; `goalId`/`contextRef` fall back to the enclosing set's. */
export function planFromSpec(value: unknown, path = '$', defaults: { goalId?: unknown; contextRef?: unknown } = {}): SpecMapping {
  const mapped: string[] = [];
  if (!isObj(value)) return { value, mapped, errors: [] };
  const plan: Obj = { ...value };
  rename(plan, 'goal_id', 'goalId', path, mapped);
  rename(plan, 'context_ref', 'contextRef', path, mapped);
  rename(plan, 'capability_map_version', 'capabilityMapVersion', path, mapped);
  if (!Object.hasOwn(plan, 'goalId') && defaults.goalId !== undefined) plan.goalId = defaults.goalId;
  if (!Object.hasOwn(plan, 'contextRef') && defaults.contextRef !== undefined) plan.contextRef = defaults.contextRef;
  if (!Object.hasOwn(plan, 'goalId') && typeof plan.id === 'string') plan.goalId = `goal-${plan.id}`;
  if (Array.isArray(plan.tasks)) plan.tasks = plan.tasks.map((t, i) => mapTask(t, `${path}.tasks[${i}]`, plan.capabilityMapVersion, mapped));
  if (Array.isArray(plan.edges)) {
    plan.edges = (plan.edges as unknown[]).map((e, i) => {
      if (!isObj(e)) return e;
      const edge: Obj = { ...e };
      rename(edge, 'on_error', 'onError', `${path}.edges[${i}]`, mapped);
      return edge;
    });
  }
  // Plan-level `join: all|any` (seed 000 §3): the semantics of every fan-in node of the plan.
  if (plan.join === 'all' || plan.join === 'any') {
    const mode = plan.join;
    const edges = Array.isArray(plan.edges) ? plan.edges.filter(isObj) : [];
    const targets = [...new Set(edges.filter((e) => e.onError === undefined).map((e) => e.to))];
    const joins = Array.isArray(plan.joins) ? [...(plan.joins as unknown[])] : [];
    for (const to of targets) {
      const from = edges.filter((e) => e.to === to && e.onError === undefined).map((e) => e.from);
      if (from.length >= 2 && !joins.some((j) => isObj(j) && j.task === to)) joins.push({ task: to, mode, waitFor: from });
    }
    plan.joins = joins;
    delete plan.join;
    mapped.push(`${path}.join -> joins (${mode} on every fan-in task)`);
  } else if (Array.isArray(plan.join) && !Object.hasOwn(plan, 'joins')) {
    plan.joins = (plan.join as unknown[]).map((j) => (isObj(j) ? { task: j.task ?? j.node, mode: j.mode ?? j.type, waitFor: j.waitFor ?? j.wait_for } : j));
    delete plan.join;
    mapped.push(`${path}.join -> joins`);
  }
  return { value: plan, mapped, errors: [] };
}

/**
 * A plan set, or a bare plan, with the spec's names mapped. A bare plan's `alternatives[]` (ids of other
 * plans) only make sense inside a set: each must name a plan of that set.
 */
export function planSetFromSpec(value: unknown): SpecMapping {
  if (!isObj(value) || !Array.isArray(value.plans)) return planFromSpec(value);
  const mapped: string[] = [];
  const errors: Problem[] = [];
  const set: Obj = { ...value };
  rename(set, 'goal_id', 'goalId', '$', mapped);
  rename(set, 'context_ref', 'contextRef', '$', mapped);
  const plans = (set.plans as unknown[]).map((p, i) => {
    const r = planFromSpec(p, `$.plans[${i}]`, { goalId: set.goalId, contextRef: set.contextRef });
    mapped.push(...r.mapped);
    return r.value;
  });
  const ids = new Set(plans.filter(isObj).map((p) => p.id));
  plans.forEach((p, i) => {
    if (!isObj(p) || !Array.isArray(p.alternatives)) return;
    p.alternatives.forEach((alt, j) => {
      if (!ids.has(alt)) errors.push({ path: `$.plans[${i}].alternatives[${j}]`, code: 'UNKNOWN_PLAN', message: `alternative '${String(alt)}' is not a plan of this set` });
    });
    delete p.alternatives;
    mapped.push(`$.plans[${i}].alternatives -> the set's other plans`);
  });
  set.plans = plans;
  if (!Object.hasOwn(set, 'selection') && isObj(plans[0]) && typeof plans[0].id === 'string') {
    set.selection = { method: 'human', chosenPlanId: plans[0].id, rationale: 'the first plan of the document' };
    mapped.push('$.selection <- the first plan');
  }
  return { value: set, mapped, errors };
}
