// Plan and plan-set validation: schema, capabilities, referential integrity, cycles, joins and guards.
// A plan that passes is safe to hand to the executor; every problem names a JSON path into the document.
import { z } from 'zod';
import { Plan, PlanSet, type Capability, type CapabilityMap } from './contracts.js';
import { checkPlanExpressions } from './plan-expressions.js';
import { ancestorsOf, findCycles, reachableFromRoots } from './plan-graph.js';
import { zodProblems, type Problem } from './zod-paths.js';

export interface PlanValidation {
  ok: boolean;
  errors: Problem[];
  warnings: Problem[];
}

export interface PlanCheckOptions {
  /** The Context Packet's facts, when known: guards, expressions and keys that read others are errors. */
  facts?: Record<string, unknown> | null;
}

export function validatePlan(plan: unknown, caps: CapabilityMap, options: PlanCheckOptions = {}): PlanValidation & { plan?: Plan } {
  const parsed = Plan.safeParse(plan);
  if (!parsed.success) return { ok: false, errors: zodProblems(parsed.error), warnings: [] };
  const result = finish(checkPlan(parsed.data, caps, '$', options.facts ?? null));
  return result.ok ? { ...result, plan: parsed.data } : result;
}

export function validatePlanSet(planSet: unknown, caps: CapabilityMap, options: PlanCheckOptions = {}): PlanValidation & { planSet?: PlanSet } {
  const parsed = PlanSet.safeParse(planSet);
  if (!parsed.success) return { ok: false, errors: zodProblems(parsed.error), warnings: [] };
  const set = parsed.data;
  const acc: Acc = { errors: [], warnings: [] };
  const seen = new Set<string>();
  set.plans.forEach((plan, i) => {
    const base = `$.plans[${i}]`;
    if (seen.has(plan.id)) acc.errors.push({ path: `${base}.id`, code: 'DUPLICATE_PLAN_ID', message: `plan id '${plan.id}' is used twice` });
    seen.add(plan.id);
    if (plan.contextRef !== set.contextRef) {
      acc.errors.push({ path: `${base}.contextRef`, code: 'CONTEXT_MISMATCH', message: `plan '${plan.id}' uses ${plan.contextRef}, the set uses ${set.contextRef}` });
    }
    if (plan.goalId !== set.goalId) {
      acc.errors.push({ path: `${base}.goalId`, code: 'GOAL_MISMATCH', message: `plan '${plan.id}' is for goal '${plan.goalId}', the set for '${set.goalId}'` });
    }
    const inner = checkPlan(plan, caps, base, options.facts ?? null);
    acc.errors.push(...inner.errors);
    acc.warnings.push(...inner.warnings);
  });
  set.plans.forEach((plan, i) =>
    (plan.alternatives ?? []).forEach((alt, j) => {
      if (alt === plan.id || !set.plans.some((p) => p.id === alt)) acc.errors.push({ path: `$.plans[${i}].alternatives[${j}]`, code: 'UNKNOWN_PLAN', message: `alternative '${alt}' is not another plan of this set` });
    }),
  );
  if (!seen.has(set.selection.chosenPlanId)) {
    acc.errors.push({
      path: '$.selection.chosenPlanId',
      code: 'UNKNOWN_PLAN',
      message: `chosen plan '${set.selection.chosenPlanId}' is not in the set (${[...seen].join(', ')})`,
    });
  }
  const result = finish(acc);
  return result.ok ? { ...result, planSet: set } : result;
}

interface Acc {
  errors: Problem[];
  warnings: Problem[];
}

function finish(acc: Acc): PlanValidation {
  return { ok: acc.errors.length === 0, errors: acc.errors, warnings: acc.warnings };
}

function checkPlan(plan: Plan, caps: CapabilityMap, base: string, facts: Record<string, unknown> | null): Acc {
  const acc: Acc = { errors: [], warnings: [] };
  const err = (path: string, code: string, message: string): void => void acc.errors.push({ path: base + path, code, message });
  const warn = (path: string, code: string, message: string): void => void acc.warnings.push({ path: base + path, code, message });

  if (plan.capabilityMapVersion !== caps.version) {
    err('.capabilityMapVersion', 'CAPABILITY_MAP_VERSION', `plan targets capability map '${plan.capabilityMapVersion}', this is '${caps.version}'`);
  }

  const ids = new Set<string>();
  const byName = new Map(caps.capabilities.map((c) => [c.name, c]));
  plan.tasks.forEach((task, i) => {
    if (ids.has(task.id)) err(`.tasks[${i}].id`, 'DUPLICATE_TASK_ID', `task id '${task.id}' is used twice`);
    ids.add(task.id);
    const cap = byName.get(task.capability);
    if (!cap) {
      err(`.tasks[${i}].capability`, 'UNKNOWN_CAPABILITY', `unknown capability '${task.capability}'; known: ${[...byName.keys()].join(', ')}`);
      return;
    }
    const version = task.capabilityVersion;
    if (version !== undefined && version !== plan.capabilityMapVersion && version !== cap.version) {
      err(`.tasks[${i}].capabilityVersion`, 'CAPABILITY_VERSION', `capabilityRef ${task.capability}@${version}: the map is '${plan.capabilityMapVersion}'${cap.version === undefined ? '' : ` and ${task.capability} is '${cap.version}'`}`);
    }
    // An input given by reference is not here to check (and the task is refused at run time).
    if (task.inputRef === undefined) for (const p of checkInput(cap, task.input, `${base}.tasks[${i}].input`)) acc.errors.push(p);
    if (task.inputRef !== undefined) warn(`.tasks[${i}].inputRef`, 'INPUT_REF', `acia does not read inputRef '${task.inputRef}': the task's input is what the plan gives (acia exec refuses to run it)`);
    const comp = task.compensation;
    const compCap = comp === undefined ? undefined : byName.get(comp.capability);
    if (comp !== undefined && compCap === undefined) err(`.tasks[${i}].compensation.capability`, 'UNKNOWN_CAPABILITY', `compensation capability '${comp.capability}' is not in the map`);
    if (comp !== undefined && compCap !== undefined) for (const p of checkInput(compCap, comp.input ?? {}, `${base}.tasks[${i}].compensation.input`)) acc.errors.push(p);
  });
  const nodes = [...ids];

  plan.edges.forEach((edge, i) => {
    if (!ids.has(edge.from)) err(`.edges[${i}].from`, 'EDGE_UNKNOWN_TASK', `edge from unknown task '${edge.from}'`);
    if (!ids.has(edge.to)) err(`.edges[${i}].to`, 'EDGE_UNKNOWN_TASK', `edge to unknown task '${edge.to}'`);
  });

  const cycles = findCycles(nodes, plan.edges);
  const onCycle = new Set(cycles.flat());
  for (const cycle of cycles) {
    const [last, first] = [cycle[cycle.length - 2], cycle[cycle.length - 1]];
    const at = plan.edges.findIndex((e) => e.from === last && e.to === first);
    err(`.edges[${at}]`, 'CYCLE', `cycle: ${cycle.join(' -> ')}`);
  }

  const joined = new Set<string>();
  plan.joins.forEach((join, i) => {
    if (!ids.has(join.task)) {
      err(`.joins[${i}].task`, 'JOIN_UNKNOWN_TASK', `join on unknown task '${join.task}'`);
      return;
    }
    if (joined.has(join.task)) err(`.joins[${i}].task`, 'DUPLICATE_JOIN', `task '${join.task}' has more than one join`);
    joined.add(join.task);
    join.waitFor.forEach((waited, j) => {
      if (!ids.has(waited)) err(`.joins[${i}].waitFor[${j}]`, 'JOIN_UNKNOWN_TASK', `join waits for unknown task '${waited}'`);
      else if (!plan.edges.some((e) => e.from === waited && e.to === join.task)) {
        err(`.joins[${i}].waitFor[${j}]`, 'JOIN_NOT_PREDECESSOR', `join '${join.task}' waits for '${waited}' but there is no edge ${waited} -> ${join.task}`);
      }
    });
  });

  const expressions = checkPlanExpressions(plan, base, facts);
  acc.errors.push(...expressions.errors);
  acc.warnings.push(...expressions.warnings);
  for (const w of joinAllWarnings(plan, nodes)) warn(w.path, w.code, w.message);

  const reachable = reachableFromRoots(nodes, plan.edges);
  const touched = new Set(plan.edges.flatMap((e) => [e.from, e.to]));
  const reported = new Set<string>();
  plan.tasks.forEach((task, i) => {
    if (reported.has(task.id)) return;
    reported.add(task.id);
    if (onCycle.has(task.id)) return; // the cycle error already says why it cannot run
    if (!reachable.has(task.id)) {
      warn(`.tasks[${i}]`, 'UNREACHABLE_TASK', `task '${task.id}' cannot be reached from any root task (a task with no incoming edge)`);
    } else if (plan.tasks.length > 1 && plan.edges.length > 0 && !touched.has(task.id)) {
      warn(`.tasks[${i}]`, 'ISOLATED_TASK', `task '${task.id}' has no edges, so it runs on its own beside the rest of the plan`);
    }
  });
  return acc;
}

/**
 * A task that waits for all of its branches (a join `all`, or a fan-in with no join, which is `all`) where a
 * guard decides whether one branch runs: when the guard is false the join cannot be met and the run fails
 * (its outcome names the join), so the plan is told before it runs. Alternatives merge with a join `any`.
 */
function joinAllWarnings(plan: Plan, nodes: string[]): Problem[] {
  const out: Problem[] = [];
  const guarded = plan.edges.filter((e) => e.guard !== undefined && e.onError === undefined);
  /** Guarded edges on some path into `id` (including the edges into it). */
  const guardsBefore = (id: string): Set<string> => {
    const upstream = ancestorsOf(id, nodes, plan.edges);
    upstream.add(id);
    return new Set(guarded.filter((e) => upstream.has(e.to)).map((e) => `${e.from} -> ${e.to}`));
  };
  const into = new Map<string, Plan['edges']>();
  for (const e of plan.edges) if (e.onError === undefined) into.set(e.to, [...(into.get(e.to) ?? []), e]);
  plan.tasks.forEach((task, i) => {
    const incoming = into.get(task.id) ?? [];
    if (incoming.length < 2 || plan.joins.find((j) => j.task === task.id)?.mode === 'any') return;
    const sets = incoming.map((e) => {
      const g = guardsBefore(e.from);
      if (e.guard !== undefined) g.add(`${e.from} -> ${e.to}`);
      return g;
    });
    // A guard every branch shares closes all of them at once (a plain skip); one only some share can split them.
    const splitting = [...new Set(sets.flatMap((g) => [...g]))].filter((g) => !sets.every((set) => set.has(g)));
    if (splitting.length === 0) return;
    out.push({
      path: `.tasks[${i}]`,
      code: 'JOIN_ALL_GUARDED',
      message: `task '${task.id}' waits for all of ${incoming.map((e) => e.from).join(', ')}, but the guard on ${splitting[0]} can close one branch and not the others; then '${task.id}' cannot run and the run fails (declare a join 'any' on it if the branches are alternatives)`,
    });
  });
  return out;
}

const inputSchemas = new WeakMap<Capability, z.ZodType | Error>();

function checkInput(cap: Capability, input: unknown, base: string): Problem[] {
  if (cap.inputSchema === undefined) return [];
  let schema = inputSchemas.get(cap);
  if (schema === undefined) {
    try {
      schema = z.fromJSONSchema(cap.inputSchema);
    } catch (e) {
      schema = e instanceof Error ? e : new Error(String(e));
    }
    inputSchemas.set(cap, schema);
  }
  if (schema instanceof Error) {
    return [{ path: base, code: 'CAPABILITY_SCHEMA', message: `capability '${cap.name}' has an unusable input schema: ${schema.message}` }];
  }
  const result = schema.safeParse(input);
  if (result.success) return [];
  return zodProblems(result.error, base).map((p) => ({ ...p, code: 'TASK_INPUT', message: `${cap.name} input: ${p.message}` }));
}
