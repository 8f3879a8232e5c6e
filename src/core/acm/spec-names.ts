// Reads plans and Task Specs written the way the ACM texts write them (seed 000 §3, seed 002 §15, the v0.5
// spec's documents §5.4-§5.5) and maps them onto ACIA's contracts: the apiVersion/kind/metadata envelope,
// `on_error` for `onError`, a plan-level `join: all|any`, `alternatives[]`, `capabilityRef: name@version`,
// the spec's `retryPolicy`, `sha256-` content addresses, snake_case references. What cannot be mapped is
// left for the strict schemas to reject with its JSON path.
import { canonicalJson } from './canonical-json.js';
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
  if (!Object.hasOwn(o, from)) return;
  if (Object.hasOwn(o, to)) {
    // Both names, saying the same (a document written for readers of either): keep one.
    if (canonicalJson(o[from]) === canonicalJson(o[to])) delete o[from];
    return;
  }
  o[to] = o[from];
  delete o[from];
  mapped.push(`${path}.${from} -> ${to}`);
}

/** The spec writes content addresses `sha256-<hex>`; ACIA `sha256:<hex>`. Anything else is left for the schema. */
export function normalizeRef(v: unknown): unknown {
  return typeof v === 'string' && /^sha256-[0-9a-f]{64}$/.test(v) ? `sha256:${v.slice('sha256-'.length)}` : v;
}

/** `name@version`: the name, and the version when there is one (the version may itself hold '@'). */
function splitRef(ref: string): { name: string; version?: string } {
  const at = ref.indexOf('@');
  return at === -1 ? { name: ref } : { name: ref.slice(0, at), version: ref.slice(at + 1) };
}

/** The v0.5 `retryPolicy` shape (`maxAttempts`, `backoffSeconds`, `retryOn`) onto ACIA's retry. */
function retryFromSpec(r: unknown, path: string, mapped: string[]): unknown {
  if (!isObj(r) || !['maxAttempts', 'backoffSeconds', 'retryOn', 'retry_on'].some((k) => Object.hasOwn(r, k))) return r;
  const out: Obj = { ...r };
  if (Object.hasOwn(out, 'maxAttempts')) {
    out.attempts = out.maxAttempts;
    delete out.maxAttempts;
  }
  if (Array.isArray(out.backoffSeconds)) {
    out.delaysMs = (out.backoffSeconds as unknown[]).map((x): unknown => (typeof x === 'number' ? Math.round(x * 1000) : x));
    out.backoff ??= 'fixed';
    out.jitter ??= false;
    delete out.backoffSeconds;
  }
  rename(out, 'retry_on', 'retryOn', path, mapped);
  mapped.push(`${path} (maxAttempts, backoffSeconds, retryOn) -> attempts, delaysMs, retryOn`);
  return out;
}

/** One Task Spec in the spec's names (in a plan, or a v0.5 TaskSpec document: `metadata.id`). */
export function mapTask(t: unknown, path: string, mapped: string[], errors: Problem[] = []): unknown {
  if (!isObj(t)) return t;
  const task: Obj = { ...t };
  if (!Object.hasOwn(task, 'id') && isObj(task.metadata) && typeof task.metadata.id === 'string') {
    task.id = task.metadata.id;
    const { id: _id, ...rest } = task.metadata;
    if (Object.keys(rest).length > 0) task.metadata = rest;
    else delete task.metadata;
    mapped.push(`${path}.metadata.id -> id`);
  }
  if (Object.hasOwn(task, 'capability') && typeof task.capabilityRef === 'string' && splitRef(task.capabilityRef).name === task.capability) {
    // Both, agreeing (a document written for readers of either name): the ref's version is kept.
    const version = splitRef(task.capabilityRef).version;
    if (version !== undefined && !Object.hasOwn(task, 'capabilityVersion')) task.capabilityVersion = version;
    delete task.capabilityRef;
  }
  if (!Object.hasOwn(task, 'capability') && typeof task.capabilityRef === 'string') {
    // name@version: the version must be the plan's capability map or the capability's own (checked by plan validation).
    const ref = splitRef(task.capabilityRef);
    task.capability = ref.name;
    if (ref.version !== undefined) task.capabilityVersion = ref.version;
    delete task.capabilityRef;
    mapped.push(`${path}.capabilityRef -> capability${ref.version === undefined ? '' : ' + capabilityVersion'}`);
  }
  rename(task, 'retryPolicy', 'retry', path, mapped);
  if (Object.hasOwn(task, 'retry')) task.retry = retryFromSpec(task.retry, `${path}.retryPolicy`, mapped);
  rename(task, 'idem_key', 'idemKey', path, mapped);
  rename(task, 'policy_input', 'policyInput', path, mapped);
  rename(task, 'verification_refs', 'verificationRefs', path, mapped);
  if (isObj(task.compensation)) {
    const c: Obj = { ...task.compensation };
    if (!Object.hasOwn(c, 'capability') && typeof c.capabilityRef === 'string') {
      const ref = splitRef(c.capabilityRef);
      c.capability = ref.name;
      if (ref.version !== undefined) c.capabilityVersion = ref.version;
      delete c.capabilityRef;
    }
    rename(c, 'trigger_on', 'triggerOn', `${path}.compensation`, mapped);
    task.compensation = c;
  }
  if (Array.isArray(task.tools)) {
    task.tools = (task.tools as unknown[]).map((x, i): unknown => {
      if (!isObj(x)) return x;
      const tool: Obj = { ...x };
      rename(tool, 'timeout_sec', 'timeoutSec', `${path}.tools[${i}]`, mapped);
      return tool;
    });
  }
  // A Nucleus (v0.5 §5.11) is a contract ACIA does not implement: a task that asks for one is refused,
  // never run as if it had it.
  for (const key of ['nucleusRef', 'internalTools']) {
    if (Object.hasOwn(task, key)) {
      errors.push({ path: `${path}.${key}`, code: 'NUCLEUS_UNSUPPORTED', message: `${key}: acia runs no Nucleus (ACM v0.5 §5.11); its model calls are recorded as LLM_CALL entries instead` });
      delete task[key];
    }
  }
  if (!Object.hasOwn(task, 'input')) task.input = {};
  return task;
}

/** The ACM v0.5 document envelope's API version. */
export const SPEC_API_VERSION = 'acm.ddse.ai/v0.5';

/**
 * Takes off a v0.5 document's envelope (`apiVersion`, `kind`, and the `metadata` the spec files identity
 * under), returning its metadata. A `kind` other than the one expected is an error at `$.kind`.
 */
export function stripEnvelope(o: Obj, kind: string, path: string, mapped: string[], errors: Problem[]): Obj {
  if (Object.hasOwn(o, 'kind')) {
    if (o.kind !== kind) errors.push({ path: `${path}.kind`, code: 'SPEC_KIND', message: `a ${String(o.kind)} document where a ${kind} is expected` });
    delete o.kind;
    mapped.push(`${path}.kind (${kind})`);
  }
  if (Object.hasOwn(o, 'apiVersion')) {
    if (typeof o.apiVersion !== 'string' || !o.apiVersion.startsWith('acm.ddse.ai/')) errors.push({ path: `${path}.apiVersion`, code: 'SPEC_API_VERSION', message: `apiVersion ${JSON.stringify(o.apiVersion)} is not an ACM one (${SPEC_API_VERSION})` });
    delete o.apiVersion;
  }
  return isObj(o.metadata) ? o.metadata : {};
}

/** Maps one plan written with the spec's names; `goalId`, `contextRef`, `capabilityMapVersion` fall back to the enclosing set's. */
export function planFromSpec(value: unknown, path = '$', defaults: { goalId?: unknown; contextRef?: unknown; capabilityMapVersion?: unknown } = {}): SpecMapping {
  const mapped: string[] = [];
  const errors: Problem[] = [];
  if (!isObj(value)) return { value, mapped, errors };
  const plan: Obj = { ...value };
  if (Object.hasOwn(plan, 'kind') || Object.hasOwn(plan, 'apiVersion')) {
    const meta = stripEnvelope(plan, 'Plan', path, mapped, errors);
    for (const key of ['id', 'goalId', 'capabilityMapVersion', 'contextRef'] as const) if (!Object.hasOwn(plan, key) && meta[key] !== undefined) plan[key] = meta[key];
    delete plan.metadata;
  }
  rename(plan, 'goal_id', 'goalId', path, mapped);
  rename(plan, 'context_ref', 'contextRef', path, mapped);
  rename(plan, 'capability_map_version', 'capabilityMapVersion', path, mapped);
  if (!Object.hasOwn(plan, 'goalId') && defaults.goalId !== undefined) plan.goalId = defaults.goalId;
  if (!Object.hasOwn(plan, 'contextRef') && defaults.contextRef !== undefined) plan.contextRef = defaults.contextRef;
  if (!Object.hasOwn(plan, 'capabilityMapVersion') && defaults.capabilityMapVersion !== undefined) plan.capabilityMapVersion = defaults.capabilityMapVersion;
  if (!Object.hasOwn(plan, 'goalId') && typeof plan.id === 'string') plan.goalId = `goal-${plan.id}`;
  plan.contextRef = normalizeRef(plan.contextRef);
  if (plan.contextRef === undefined) delete plan.contextRef;
  if (plan.promptDigest !== undefined) plan.promptDigest = normalizeRef(plan.promptDigest);
  if (Array.isArray(plan.tasks)) plan.tasks = plan.tasks.map((t, i) => mapTask(t, `${path}.tasks[${i}]`, mapped, errors));
  if (Array.isArray(plan.edges)) {
    plan.edges = (plan.edges as unknown[]).map((e, i) => {
      if (!isObj(e)) return e;
      const edge: Obj = { ...e };
      rename(edge, 'on_error', 'onError', `${path}.edges[${i}]`, mapped);
      return edge;
    });
  }
  // Plan-level `join: all|any` (seed 000 §3): the semantics of every fan-in node the plan's `joins` do not name.
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
  return { value: plan, mapped, errors };
}

/**
 * A plan set (ACIA's, or a v0.5 PlanSet document), or a bare plan, with the spec's names mapped. Plans keep
 * their `alternatives[]` (validatePlanSet checks each names another plan of the set).
 */
export function planSetFromSpec(value: unknown): SpecMapping {
  if (!isObj(value) || !Array.isArray(value.plans)) return planFromSpec(value);
  const mapped: string[] = [];
  const errors: Problem[] = [];
  const set: Obj = { ...value };
  const meta = Object.hasOwn(set, 'kind') || Object.hasOwn(set, 'apiVersion') ? stripEnvelope(set, 'PlanSet', '$', mapped, errors) : {};
  if (!Object.hasOwn(set, 'goalId') && meta.goalId !== undefined) set.goalId = meta.goalId;
  delete set.metadata;
  rename(set, 'goal_id', 'goalId', '$', mapped);
  rename(set, 'context_ref', 'contextRef', '$', mapped);
  set.contextRef = normalizeRef(set.contextRef);
  const plans = (set.plans as unknown[]).map((p, i) => {
    const r = planFromSpec(p, `$.plans[${i}]`, { goalId: set.goalId, contextRef: set.contextRef, capabilityMapVersion: meta.capabilityMapVersion });
    mapped.push(...r.mapped);
    errors.push(...r.errors);
    return r.value;
  });
  set.plans = plans;
  if (!Object.hasOwn(set, 'selection') && isObj(plans[0]) && typeof plans[0].id === 'string') {
    set.selection = { method: 'human', chosenPlanId: plans[0].id, rationale: 'the first plan of the document' };
    mapped.push('$.selection <- the first plan');
  }
  return { value: set, mapped, errors };
}
