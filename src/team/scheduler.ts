// Which tasks can run now: a pure function of the run state (predecessors done, joins satisfied,
// guards evaluated over recorded outputs only).
import type { Edge, Plan } from '../core/acm/contracts.js';
import type { RunState, TaskState } from './run-state.js';

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
  /** Guarded edges whose source finished but whose value is not yet recorded. */
  guardsToRecord: Edge[];
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

export function edgeState(state: RunState, edge: Edge): EdgeState {
  const src = effectiveSource(state, edge.from);
  if (!src) return 'not_taken';
  if (edge.onError !== undefined) {
    if (src.status === 'failed' && !src.supersededBy) return src.lastError?.kind === edge.onError ? 'taken' : 'not_taken';
    return src.status === 'completed' || src.status === 'skipped' || src.status === 'failed' ? 'not_taken' : 'unresolved';
  }
  if (src.status === 'completed') {
    if (edge.guard === undefined) return 'taken';
    const v = state.branches.get(`${edge.from}->${edge.to}`);
    return v === undefined ? 'unresolved' : v ? 'taken' : 'not_taken';
  }
  if (src.status === 'failed' || src.status === 'skipped') return 'not_taken';
  return 'unresolved';
}

export function schedule(state: RunState, plan: Plan): Schedule {
  const ready: string[] = [];
  const skip: string[] = [];
  const guardsToRecord: Edge[] = [];
  let open = 0;
  for (const edge of plan.edges) {
    if (edge.guard === undefined || edge.onError !== undefined) continue;
    const src = effectiveSource(state, edge.from);
    if (src?.status === 'completed' && !state.branches.has(`${edge.from}->${edge.to}`)) guardsToRecord.push(edge);
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
    const states = incoming.map((e) => ({ e, s: edgeState(state, e) }));
    const errorTaken = states.some(({ e, s }) => e.onError !== undefined && s === 'taken');
    if (errorTaken) {
      ready.push(id);
      continue;
    }
    const normal = states.filter(({ e }) => e.onError === undefined);
    const join = plan.joins.find((j) => j.task === id);
    if (join?.mode === 'any') {
      const fromWaited = normal.filter(({ e }) => join.waitFor.includes(e.from));
      const pool = fromWaited.length > 0 ? fromWaited : normal;
      if (pool.some(({ s }) => s === 'taken')) ready.push(id);
      else if (states.every(({ s }) => s !== 'unresolved')) skip.push(id);
      continue;
    }
    if (states.some(({ s }) => s === 'unresolved')) continue;
    if (normal.length > 0 && normal.every(({ s }) => s === 'taken')) ready.push(id);
    else skip.push(id);
  }
  return { ready, skip, guardsToRecord, open };
}

/** The guard scope: recorded task outputs, context facts and the last policy results. */
export function guardScope(state: RunState, facts: Record<string, unknown>): GuardScope {
  const tasks: Record<string, unknown> = {};
  for (const [id, t] of state.tasks) if (t.output) tasks[id] = t.output;
  return { tasks, context: { facts }, policy: { allow: true } };
}
