// ACIA's artifacts written in the ACM v0.5 spec's document forms (§5.1-§5.5, §5.8), the inverse of
// spec-documents.ts and spec-names.ts: what a replay bundle ships so other ACM tools can read it. Where
// the spec and the reference implementation (ddse-foundation/acm) name a field differently both names are
// written (an edge's `on_error` and `onError`), and ids are also at the top level where the reference
// reads them (`id` beside `metadata.id`). Content addresses are the spec's `sha256-<hex>`.
import type { CapabilityMap, ContextPacket, Goal, Plan, TaskSpec } from './contracts.js';
import { SPEC_API_VERSION } from './spec-names.js';

/** `sha256:<hex>` (ACIA) as the spec writes it, `sha256-<hex>`; anything else unchanged. */
export function specRef(ref: string): string {
  return ref.replace(/^sha256:/, 'sha256-');
}

const envelope = (kind: string) => ({ apiVersion: SPEC_API_VERSION, kind });

/** A Goal Card (§5.1), bound to the packet the run planned from. */
export function goalCardDocument(goal: Goal, contextRef: string | null): Record<string, unknown> {
  return {
    ...envelope('GoalCard'),
    id: goal.id,
    metadata: { id: goal.id, ...(goal.metadata ?? {}) },
    intent: goal.intent,
    actors: goal.actors ?? [],
    constraints: goal.constraints,
    acceptance: goal.acceptance ?? {},
    policy_context: goal.policyContext ?? {},
    context_required: goal.contextRequired,
    contextRef: contextRef === null ? null : specRef(contextRef),
  };
}

/** A Context Packet (§5.3): `metadata.id` is its content address, as the plans' contextRef names it. */
export function packetDocument(packet: ContextPacket, contextRef: string): Record<string, unknown> {
  const { builder, createdAt, retrievalSnapshot, promptDigest, ...provenance } = packet.provenance;
  return {
    ...envelope('ContextPacket'),
    id: specRef(contextRef),
    version: packet.version,
    metadata: { id: specRef(contextRef), version: packet.version, label: packet.id, builder, ...(createdAt ? { createdAt } : {}), ...(packet.goalId === undefined ? {} : { goalId: packet.goalId }) },
    sources: packet.sources.map((s) => ({ uri: s.uri, ...(s.digest === undefined ? {} : { digest: specRef(s.digest) }), ...(s.type === undefined ? {} : { type: s.type }) })),
    facts: packet.facts,
    assumptions: packet.assumptions,
    constraints_inherited: packet.constraints,
    augmentations: (packet.augmentations ?? []).map((a) => ({ type: a.type, artifact: a.artifact, ...(a.digest === undefined ? {} : { digest: specRef(a.digest) }) })),
    provenance: {
      builder,
      ...provenance,
      ...(retrievalSnapshot === undefined ? {} : { retrieval_snapshot: retrievalSnapshot }),
      ...(promptDigest === undefined ? {} : { prompt_digest: promptDigest }),
    },
  };
}

/** A task of a plan in the spec's names; `sheet` is where its verification expressions are (a Verification Sheet). */
export function taskDocument(t: TaskSpec, mapVersion: string, sheet?: string): Record<string, unknown> {
  const r = t.retry;
  return {
    id: t.id,
    capabilityRef: `${t.capability}@${t.capabilityVersion ?? mapVersion}`,
    capability: t.capability,
    ...(t.title === undefined ? {} : { title: t.title }),
    input: t.input,
    ...(t.idemKey === undefined ? {} : { idemKey: t.idemKey }),
    ...(t.policyInput === undefined ? {} : { policyInput: t.policyInput }),
    verification: t.verification,
    ...(sheet !== undefined && t.verification.length > 0 ? { verificationRefs: [`${sheet}#${t.id}`] } : {}),
    ...(r === undefined
      ? {}
      : {
          retryPolicy: {
            maxAttempts: r.attempts,
            ...(r.delaysMs ? { backoffSeconds: r.delaysMs.map((ms) => ms / 1000) } : { backoff: r.backoff, baseMs: r.baseMs, jitter: r.jitter }),
            ...(r.retryOn ? { retryOn: r.retryOn } : {}),
          },
        }),
    ...(t.compensation === undefined
      ? {}
      : { compensation: { capabilityRef: `${t.compensation.capability}@${t.compensation.capabilityVersion ?? mapVersion}`, triggerOn: t.compensation.triggerOn, ...(t.compensation.input ? { input: t.compensation.input } : {}) } }),
    ...(t.tools === undefined ? {} : { tools: t.tools.map((x) => ({ name: x.name, version: x.version, ...(x.timeoutSec === undefined ? {} : { timeout_sec: x.timeoutSec }) })) }),
    ...(t.telemetry === undefined ? {} : { telemetry: t.telemetry }),
  };
}

/** A stand-alone Task Spec document (§5.5). */
export function taskSpecDocument(t: TaskSpec, o: { goalId: string; planId: string; mapVersion: string; sheet?: string }): Record<string, unknown> {
  return { ...envelope('TaskSpec'), metadata: { id: t.id, goalId: o.goalId, planId: o.planId }, ...taskDocument(t, o.mapVersion, o.sheet) };
}

/**
 * A Plan Graph (§5.4) as the spec and the reference SDK read it: a plan-level `join: all|any` when every join
 * of the plan has that mode (the reference's one join field), and ACIA's per-task `joins` beside it.
 */
export function planDocument(plan: Plan, o: { alternatives: string[]; sheet?: string }): Record<string, unknown> {
  const modes = [...new Set(plan.joins.map((j) => j.mode))];
  return {
    ...envelope('Plan'),
    id: plan.id,
    goalId: plan.goalId,
    contextRef: specRef(plan.contextRef),
    capabilityMapVersion: plan.capabilityMapVersion,
    rationale: plan.rationale,
    alternatives: o.alternatives,
    ...(plan.promptDigest === undefined ? {} : { promptDigest: specRef(plan.promptDigest) }),
    tasks: plan.tasks.map((t) => taskDocument(t, plan.capabilityMapVersion, o.sheet)),
    edges: plan.edges.map((e) => ({ from: e.from, to: e.to, ...(e.guard === undefined ? {} : { guard: e.guard }), ...(e.onError === undefined ? {} : { on_error: e.onError, onError: e.onError }) })),
    ...(modes.length === 1 ? { join: modes[0] } : {}),
    joins: plan.joins,
  };
}

/** The Capability Map (§5.2): its version is its `metadata.id`. */
export function capabilityMapDocument(map: CapabilityMap): Record<string, unknown> {
  return { ...envelope('CapabilityMap'), metadata: { id: map.version }, version: map.version, capabilities: map.capabilities };
}

/** A Verification Sheet (§5.8) of the tasks' verification expressions, one check per task. */
export function verificationSheetDocument(id: string, tasks: readonly TaskSpec[]): Record<string, unknown> {
  const checks: Record<string, unknown> = {};
  for (const t of tasks) {
    if (t.verification.length === 0) continue;
    checks[t.id] = {
      description: `what ${t.id} (${t.capability}) must satisfy after it runs`,
      type: 'post',
      assertions: t.verification.map((expr) => ({ expr, message: `${expr} must hold` })),
      onFailure: { route: `tasks.${t.id}.on_error`, errorKind: 'FATAL_ERROR' },
    };
  }
  return { ...envelope('VerificationSheet'), metadata: { id, language: 'acia guard expressions (docs/guards.md)' }, checks };
}
