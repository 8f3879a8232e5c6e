// Which tasks can run now: a pure function of the run state (predecessors done, joins satisfied,
// guards evaluated over recorded outputs only).
import type { Edge, Plan } from '../core/acm/contracts.js';
import type { RunState, SkipCause, TaskState } from './run-state.js';

export interface GuardScope {
  tasks: Record<string, unknown>;
  context: { facts: Record<string, unknown> };
  policy: Record<string, unknown>;
}
export type GuardEvaluator = (guard: string, scope: GuardScope) => boolean;

export interface Schedule {
  ready: string[];
  /** Tasks whose every incoming edge resolved without one being taken: they will never run. */
  skip: string[];
  /** Why each task in `skip` will never run (see SkipCause). */
  skipCauses: Map<string, SkipCause>;
  /** Guarded edges whose source finished but whose value is not yet recorded. */
  guardsToRecord: Edge[];
  /** Error edges whose source failed with their kind and whose choice is not yet recorded as a decision. */
  errorRoutesToRecord: Edge[];
  /** Tasks still pending or running. */
  open: number;
}

type EdgeState = 'taken' | 'not_taken' | 'unresolved';

/** Follows re-verify replacements so edges out of a superseded task leave from its replacement. */
export function effectiveSource(state: RunState, id: string): TaskState | undefined {
  let t = state.tasks.get(id);
  const seen = new Set<string>();
  while (t?.supersededBy && !seen.has(t.supersededBy)) {
    seen.add(t.supersededBy);
    t = state.tasks.get(t.supersededBy);
  }
  return t;
}

/** A failed task whose failure the plan routes along one of its error edges. */
export function failureRouted(state: RunState, plan: Plan, id: string): boolean {
  const t = state.tasks.get(id);
  if (!t || t.status !== 'failed' || t.supersededBy !== null) return false;
  return routesError(state, plan, id, t.lastError?.kind);
}

/** Whether the plan has an error edge of `kind` leaving `id` (or a task `id` replaced). */
export function routesError(state: RunState, plan: Plan, id: string, kind: string | undefined): boolean {
  if (kind === undefined) return false;
  return plan.edges.some((e) => e.onError === kind && (e.from === id || effectiveSource(state, e.from)?.spec.id === id));
}

/**
 * Where an edge stands. A failed source decides nothing on its own: until its failure is routed (an
 * error edge of its kind) the fix loop, a re-plan or a human may still bring it back, so its successors
 * wait instead of being skipped. A task a human skipped lets the plan go on: its plain edges are taken
 * and its guarded ones are evaluated like any other (over the output it never recorded).
 */
export function edgeState(state: RunState, edge: Edge, plan?: Plan): EdgeState {
  const src = effectiveSource(state, edge.from);
  if (!src) return 'not_taken';
  const humanSkipped = src.status === 'skipped' && src.skipCause === 'human';
  if (edge.onError !== undefined) {
    if (src.status === 'failed' && !src.supersededBy) return src.lastError?.kind === edge.onError ? 'taken' : 'not_taken';
    return src.status === 'completed' || src.status === 'skipped' ? 'not_taken' : 'unresolved';
  }
  if (src.status === 'completed' || humanSkipped) {
    if (edge.guard === undefined) return 'taken';
    const v = state.branches.get(`${edge.from}->${edge.to}`);
    return v === undefined ? 'unresolved' : v ? 'taken' : 'not_taken';
  }
  if (src.status === 'skipped') return 'not_taken';
  if (src.status === 'failed') {
    const routed = plan === undefined || failureRouted(state, plan, src.spec.id);
    return routed ? 'not_taken' : 'unresolved';
  }
  return 'unresolved';
}

/** Why a resolved, untaken edge was not taken: a guard said so (or the path it guarded), or a failure upstream. */
function notTakenCause(state: RunState, edge: Edge): SkipCause {
  const src = effectiveSource(state, edge.from);
  if (!src) return 'upstream';
  if (edge.onError !== undefined) return src.status === 'completed' || (src.status === 'skipped' && src.skipCause === 'guard') ? 'guard' : 'upstream';
  if (src.status === 'completed' || (src.status === 'skipped' && src.skipCause === 'human')) return 'guard';
  if (src.status === 'skipped' && src.skipCause === 'guard') return 'guard';
  return 'upstream';
}

export function schedule(state: RunState, plan: Plan): Schedule {
  const ready: string[] = [];
  const skip: string[] = [];
  const skipCauses = new Map<string, SkipCause>();
  const guardsToRecord: Edge[] = [];
  const errorRoutesToRecord: Edge[] = [];
  let open = 0;
  for (const edge of plan.edges) {
    const src = effectiveSource(state, edge.from);
    const key = `${edge.from}->${edge.to}`;
    if (edge.onError !== undefined) {
      if (src?.status === 'failed' && !src.supersededBy && src.lastError?.kind === edge.onError && !state.branches.has(key)) errorRoutesToRecord.push(edge);
      continue;
    }
    if (edge.guard === undefined) continue;
    const finished = src?.status === 'completed' || (src?.status === 'skipped' && src.skipCause === 'human');
    if (finished && !state.branches.has(key)) guardsToRecord.push(edge);
  }
  for (const [id, task] of state.tasks) {
    if (task.status === 'running') open++;
    if (task.status !== 'pending') continue;
    open++;
    const incoming = plan.edges.filter((e) => e.to === id);
    if (incoming.length === 0) {
      ready.push(id);
      continue;
    }
    const states = incoming.map((e) => ({ e, s: edgeState(state, e, plan) }));
    const errorTaken = states.some(({ e, s }) => e.onError !== undefined && s === 'taken');
    if (errorTaken) {
      ready.push(id);
      continue;
    }
    const normal = states.filter(({ e }) => e.onError === undefined);
    const join = plan.joins.find((j) => j.task === id);
    const markSkip = (): void => {
      skip.push(id);
      const causes = states.filter(({ s }) => s === 'not_taken').map(({ e }) => notTakenCause(state, e));
      const byGuards = causes.length > 0 && causes.every((c) => c === 'guard');
      // Some branch did reach it: an `all` join whose other branches guards closed is no guard skip.
      const reached = normal.some(({ s }) => s === 'taken');
      skipCauses.set(id, byGuards && reached ? 'join' : byGuards ? 'guard' : 'upstream');
    };
    if (join?.mode === 'any') {
      const fromWaited = normal.filter(({ e }) => join.waitFor.includes(e.from));
      const pool = fromWaited.length > 0 ? fromWaited : normal;
      if (pool.some(({ s }) => s === 'taken')) ready.push(id);
      else if (states.every(({ s }) => s !== 'unresolved')) markSkip();
      continue;
    }
    if (states.some(({ s }) => s === 'unresolved')) continue;
    if (normal.length > 0 && normal.every(({ s }) => s === 'taken')) ready.push(id);
    else markSkip();
  }
  return { ready, skip, skipCauses, guardsToRecord, errorRoutesToRecord, open };
}

/**
 * The guard scope: recorded task outputs, the recorded context facts, and as `policy` the recorded PDP
 * response about the edge's source task (or, for a source with none, the plan's admission), never a
 * constant: `!policy.allow` branches follow what the policy actually said.
 */
export function guardScope(state: RunState, facts: Record<string, unknown>, from?: string): GuardScope {
  const tasks: Record<string, unknown> = {};
  for (const [id, t] of state.tasks) {
    // A task a replacement answers for (a re-verification, a merge task) reads as its replacement's output
    // over its own: `$t2.passed` after t2 failed and t2-r1 passed is true.
    const eff = effectiveSource(state, id);
    const output = eff && eff !== t && eff.output ? { ...(t.output ?? {}), ...eff.output } : t.output;
    if (output) tasks[id] = output;
  }
  return { tasks, context: { facts }, policy: policyFor(state, from) };
}

export function policyFor(state: RunState, from?: string): { allow: boolean; reason?: string } | Record<string, never> {
  const own = from === undefined ? null : effectiveSource(state, from)?.policy ?? state.tasks.get(from)?.policy ?? null;
  const p = own ?? state.admitPolicy;
  if (p === null) return {};
  return { allow: p.allow, ...(p.reason === undefined ? {} : { reason: p.reason }) };
}
