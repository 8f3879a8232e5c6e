// The ACM v0.5 spec's artifact documents (§5.1 Goal Card, §5.2 Capability Map, §5.3 Context Packet, §5.5
// Task Spec) read onto ACIA's contracts: the apiVersion/kind/metadata envelope taken off, snake_case names
// mapped, `sha256-` addresses normalised. Plans and plan sets are spec-names.ts. Each mapping lists what
// it renamed; what cannot be mapped is left for the strict schemas to reject with its JSON path.
import { mapTask, normalizeRef, stripEnvelope, type SpecMapping } from './spec-names.js';
import type { Problem } from './zod-paths.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The ACIA document kind a v0.5 `kind:` names. */
export const SPEC_KINDS: Record<string, string> = {
  GoalCard: 'goal',
  ContextPacket: 'context-packet',
  PlanSet: 'plan-set',
  Plan: 'plan',
  TaskSpec: 'task',
  CapabilityMap: 'capability-map',
};

/** Moves `from` to `to` (when `to` is free, or holds the same value), noting it. */
function move(o: Obj, from: string, to: string, path: string, mapped: string[]): void {
  if (!Object.hasOwn(o, from)) return;
  if (!Object.hasOwn(o, to) || JSON.stringify(o[to]) === JSON.stringify(o[from])) {
    o[to] = o[from];
    delete o[from];
    mapped.push(`${path}.${from} -> ${to}`);
  }
}

/** The Goal Card (§5.1): `metadata.id`, `intent.summary`, `context_required`, `policy_context`, `contextRef: null` (unbound). */
export function goalFromSpec(value: unknown): SpecMapping {
  const mapped: string[] = [];
  const errors: Problem[] = [];
  if (!isObj(value)) return { value, mapped, errors };
  const goal: Obj = { ...value };
  const enveloped = Object.hasOwn(goal, 'kind') || Object.hasOwn(goal, 'apiVersion');
  if (enveloped) {
    const meta = { ...stripEnvelope(goal, 'GoalCard', '$', mapped, errors) };
    if (!Object.hasOwn(goal, 'id') && typeof meta.id === 'string') {
      goal.id = meta.id;
      mapped.push('$.metadata.id -> id');
    }
    delete meta.id;
    if (Object.keys(meta).length > 0) goal.metadata = meta;
    else delete goal.metadata;
  }
  if (isObj(goal.intent) && typeof goal.intent.summary === 'string') {
    goal.intent = goal.intent.summary;
    mapped.push('$.intent.summary -> intent');
  }
  move(goal, 'context_required', 'contextRequired', '$', mapped);
  move(goal, 'policy_context', 'policyContext', '$', mapped);
  if (goal.contextRef === null) {
    delete goal.contextRef;
    mapped.push('$.contextRef: null (not bound yet)');
  } else goal.contextRef = normalizeRef(goal.contextRef);
  if (goal.contextRef === undefined) delete goal.contextRef;
  return { value: goal, mapped, errors };
}

/** The Context Packet (§5.3): `metadata.{id, version, createdAt, builder}`, `constraints_inherited`, the spec's provenance names. */
export function packetFromSpec(value: unknown): SpecMapping {
  const mapped: string[] = [];
  const errors: Problem[] = [];
  if (!isObj(value)) return { value, mapped, errors };
  const packet: Obj = { ...value };
  const provenance: Obj = isObj(packet.provenance) ? { ...packet.provenance } : {};
  if (Object.hasOwn(packet, 'kind') || Object.hasOwn(packet, 'apiVersion')) {
    const meta = stripEnvelope(packet, 'ContextPacket', '$', mapped, errors);
    for (const key of ['id', 'version', 'goalId'] as const) if (!Object.hasOwn(packet, key) && meta[key] !== undefined) packet[key] = meta[key];
    for (const key of ['createdAt', 'builder'] as const) if (!Object.hasOwn(provenance, key) && meta[key] !== undefined) provenance[key] = meta[key];
    delete packet.metadata;
    mapped.push('$.metadata -> id, version, provenance');
  }
  move(packet, 'constraints_inherited', 'constraints', '$', mapped);
  move(provenance, 'retrieval_snapshot', 'retrievalSnapshot', '$.provenance', mapped);
  move(provenance, 'prompt_digest', 'promptDigest', '$.provenance', mapped);
  // A packet built elsewhere need not say how: ACIA's contract wants a builder name.
  if (Object.keys(provenance).length > 0 || Object.hasOwn(packet, 'provenance')) packet.provenance = { builder: 'unknown', ...provenance };
  packet.assumptions ??= [];
  packet.constraints ??= {};
  if (Array.isArray(packet.sources)) {
    packet.sources = (packet.sources as unknown[]).map((s): unknown => (isObj(s) ? { ...s, ...(s.digest === undefined ? {} : { digest: normalizeRef(s.digest) }) } : s));
  }
  if (Array.isArray(packet.augmentations)) {
    packet.augmentations = (packet.augmentations as unknown[]).map((a): unknown => (isObj(a) && a.digest !== undefined ? { ...a, digest: normalizeRef(a.digest) } : a));
  }
  return { value: packet, mapped, errors };
}

/** A stand-alone Task Spec (§5.5): the envelope, `metadata.id`, and the task names a plan's tasks get too. */
export function taskFromSpec(value: unknown): SpecMapping {
  const mapped: string[] = [];
  const errors: Problem[] = [];
  if (!isObj(value)) return { value, mapped, errors };
  const task: Obj = { ...value };
  if (Object.hasOwn(task, 'kind') || Object.hasOwn(task, 'apiVersion')) stripEnvelope(task, 'TaskSpec', '$', mapped, errors);
  return { value: mapTask(task, '$', mapped, errors), mapped, errors };
}

/** The Capability Map (§5.2): the envelope's `metadata.id` is the map's version. */
export function capabilityMapFromSpec(value: unknown): SpecMapping {
  const mapped: string[] = [];
  const errors: Problem[] = [];
  if (!isObj(value)) return { value, mapped, errors };
  const map: Obj = { ...value };
  if (Object.hasOwn(map, 'kind') || Object.hasOwn(map, 'apiVersion')) {
    const meta = stripEnvelope(map, 'CapabilityMap', '$', mapped, errors);
    if (!Object.hasOwn(map, 'version') && typeof (meta.version ?? meta.id) === 'string') {
      map.version = meta.version ?? meta.id;
      mapped.push('$.metadata.id -> version');
    }
    delete map.metadata;
  }
  return { value: map, mapped, errors };
}

/** The kind a document declares with the spec's `kind:` (and an ACM apiVersion), as ACIA names it. */
export function declaredKind(value: unknown): string | undefined {
  if (!isObj(value) || typeof value.kind !== 'string') return undefined;
  if (typeof value.apiVersion === 'string' && !value.apiVersion.startsWith('acm.ddse.ai/')) return undefined;
  return SPEC_KINDS[value.kind];
}

