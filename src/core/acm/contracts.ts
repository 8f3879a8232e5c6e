// The ACM contracts (seeds 000, 002, 003) as zod schemas: the shapes every layer exchanges and stores.
import { z } from 'zod';
import { CONTENT_REF } from './canonical-json.js';
import { RunId, Seq, StepId } from './ids.js';

const JsonObject = z.record(z.string(), z.unknown());

/** Task ids double as guard references (`$t3.risk`), so they are identifiers. */
export const TaskId = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/, 'task id: a letter or _ then letters, digits, _ or -');
export const ContentRef = z.string().regex(CONTENT_REF, 'expected sha256:<64 hex digits>');

/** The Goal Card (ACM v0.5 §5.1); the spec's snake_case names are read by spec-documents.ts. */
export const Goal = z.strictObject({
  id: z.string().min(1),
  intent: z.string().min(1),
  constraints: JsonObject.default({}),
  contextRequired: z.boolean().default(true),
  contextRef: ContentRef.optional(),
  /** Stakeholders or personas the goal affects. */
  actors: z.array(z.string().min(1)).optional(),
  /** Success criteria and verification targets. */
  acceptance: JsonObject.optional(),
  /** References to policy sheets and approvals (`policy_context`). */
  policyContext: JsonObject.optional(),
  /** Planner hints, priority, owner, timestamps, tags. */
  metadata: JsonObject.optional(),
});
export type Goal = z.infer<typeof Goal>;

export const ContextSource = z.strictObject({
  uri: z.string().min(1),
  digest: ContentRef.optional(),
  /** What kind of source it is (`git_commit`, `file`, `vector_db_snapshot`...). */
  type: z.string().min(1).optional(),
  excerpt: z.string().optional(),
});

/** A derived artifact of the packet (ACM v0.5 §4 Augment): a summary, an index, an entity map. */
export const ContextAugmentation = z.strictObject({
  type: z.string().min(1),
  /** Where it is: a URI, or a path inside the packet (`facts.files`). */
  artifact: z.string().min(1),
  digest: ContentRef.optional(),
});

/** The immutable planning input (ACM §9); its content address is the plans' `contextRef`. */
export const ContextPacket = z.strictObject({
  id: z.string().min(1),
  /** A monotonic version tag (ACM v0.5 §4 Version). */
  version: z.string().default('1'),
  /** The goal it was built for; a packet from elsewhere (`acia plan --context`) may name none. */
  goalId: z.string().min(1).optional(),
  sources: z.array(ContextSource),
  facts: JsonObject,
  assumptions: z.array(z.string()),
  /** The read-only view of the goal's constraints (`constraints_inherited`). */
  constraints: JsonObject,
  augmentations: z.array(ContextAugmentation).optional(),
  provenance: z.strictObject({
    builder: z.string().min(1),
    createdAt: z.string().optional(),
    repoHead: z.string().optional(),
    /** When the snapshot's commit was made (its committer date): what the packet's version orders by. */
    repoCommittedAt: z.string().optional(),
    models: z.array(z.string()).optional(),
    retrievalSnapshot: z.string().optional(),
    llm: z.strictObject({ provider: z.string(), model: z.string(), temperature: z.number().optional() }).optional(),
    promptDigest: z.string().optional(),
  }),
});
export type ContextPacket = z.infer<typeof ContextPacket>;

export const ErrorKind = z.enum(['RETRYABLE_ERROR', 'FATAL_ERROR', 'COMPENSATION_REQUIRED']);
export type ErrorKind = z.infer<typeof ErrorKind>;

/** Seed 000 §3's retry, plus what the v0.5 spec's `retryPolicy` says (`backoffSeconds`, `retryOn`). */
export const RetryPolicy = z.strictObject({
  attempts: z.number().int().min(1).max(20).default(1),
  backoff: z.enum(['fixed', 'exp']).default('exp'),
  baseMs: z.number().int().min(0).max(600_000).default(1000),
  jitter: z.boolean().default(true),
  /** The wait before each retry in turn (the last repeats); overrides backoff when given. */
  delaysMs: z.array(z.number().int().min(0).max(600_000)).min(1).optional(),
  /** The failure kinds that are retried; absent, every kind is. */
  retryOn: z.array(ErrorKind).min(1).optional(),
});
export type RetryPolicy = z.infer<typeof RetryPolicy>;

/** A compensation the Task Spec declares (ACM v0.5 §5.5): a task added to the plan when the task fails so. */
export const TaskCompensation = z.strictObject({
  capability: z.string().min(1),
  capabilityVersion: z.string().min(1).optional(),
  triggerOn: z.array(ErrorKind).min(1).default(['COMPENSATION_REQUIRED']),
  input: JsonObject.optional(),
});

export const TaskSpec = z.strictObject({
  id: TaskId,
  capability: z.string().min(1),
  /** The capability version a `capabilityRef: name@version` asked for: the map's version or the capability's own. */
  capabilityVersion: z.string().min(1).optional(),
  title: z.string().optional(),
  input: JsonObject.default({}),
  /** The spec's `inputRef`: a file holding the input. ACIA does not read it; a task with one is refused at run time. */
  inputRef: z.string().min(1).optional(),
  retry: RetryPolicy.optional(),
  idemKey: z.string().optional(),
  verification: z.array(z.string()).default([]),
  /** References to Verification Sheet checks (`sheet#check`), inlined into `verification` when a plan file is read. */
  verificationRefs: z.array(z.string().min(1)).optional(),
  policyInput: JsonObject.optional(),
  compensation: TaskCompensation.optional(),
  /** Concrete tool bindings the spec may name; ACIA's agents' tools come from their role (recorded, not enforced). */
  tools: z.array(z.strictObject({ name: z.string().min(1), version: z.string().min(1), timeoutSec: z.number().positive().optional() })).optional(),
  /** OTEL span metadata the spec may ask for (recorded, exported). */
  telemetry: JsonObject.optional(),
  metadata: JsonObject.optional(),
});
export type TaskSpec = z.infer<typeof TaskSpec>;

export const Edge = z.strictObject({
  from: TaskId,
  to: TaskId,
  guard: z.string().min(1).optional(),
  onError: ErrorKind.optional(),
});
export type Edge = z.infer<typeof Edge>;

/** A join node: `task` waits for `waitFor` (all of them, or any one). */
export const Join = z.strictObject({
  task: TaskId,
  mode: z.enum(['all', 'any']),
  waitFor: z.array(TaskId).min(1),
});
export type Join = z.infer<typeof Join>;

export const Plan = z.strictObject({
  id: z.string().min(1),
  goalId: z.string().min(1),
  contextRef: ContentRef,
  capabilityMapVersion: z.string().min(1),
  tasks: z.array(TaskSpec).min(1),
  edges: z.array(Edge).default([]),
  joins: z.array(Join).default([]),
  rationale: z.string().default(''),
  /** Ids of the other plans of its set over the same packet (ACM 002 §15). */
  alternatives: z.array(z.string().min(1)).optional(),
  /** The digest of the planner's prompt that produced the plan (its model request), when a model planned it. */
  promptDigest: ContentRef.optional(),
});
export type Plan = z.infer<typeof Plan>;

export const PlanSelection = z.strictObject({
  method: z.enum(['human', 'policy', 'llm']),
  chosenPlanId: z.string().min(1),
  rationale: z.string().min(1),
});
export type PlanSelection = z.infer<typeof PlanSelection>;

/** Plan alternatives over one Context Packet (ACM §12). */
export const PlanSet = z.strictObject({
  goalId: z.string().min(1),
  contextRef: ContentRef,
  plans: z.array(Plan).min(1).max(4),
  selection: PlanSelection,
});
export type PlanSet = z.infer<typeof PlanSet>;

/** A Capability Map entry (ACM v0.5 §5.2). `actor` is who does it in ACIA (absent in other maps). */
export const Capability = z.strictObject({
  name: z.string().min(1),
  /** The capability's own semantic version (a `capabilityRef: name@version` may name it). */
  version: z.string().min(1).optional(),
  description: z.string().default(''),
  actor: z.enum(['pm', 'dev', 'qa', 'human']).optional(),
  /** The side effects that need idempotency or compensation (the spec's list), or just whether it has any. */
  sideEffects: z.union([z.boolean(), z.array(z.string())]),
  inputSchema: JsonObject.optional(),
  outputSchema: JsonObject.optional(),
  /** Post-conditions (e.g. `amount >= 0`). */
  invariants: z.array(z.string()).optional(),
  tools: z.array(z.strictObject({ name: z.string().min(1), version: z.string().min(1) })).optional(),
});
export type Capability = z.infer<typeof Capability>;

export const CapabilityMap = z.strictObject({
  version: z.string().min(1),
  capabilities: z.array(Capability),
});
export type CapabilityMap = z.infer<typeof CapabilityMap>;

export const Actor = z
  .string()
  .regex(/^(pm|team|policy|human|(dev|qa|pm):[A-Za-z_][A-Za-z0-9_-]*)$/, 'actor: pm, team, policy, human, dev:<task> or qa:<task>');

export const HASH_HEX = /^[0-9a-f]{64}$/;
export const GENESIS_HASH = '0'.repeat(64);

const chunkBase = { runId: RunId, stepId: StepId, seq: Seq };
export const StreamChunk = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('token'), ...chunkBase, text: z.string() }),
  z.strictObject({
    kind: z.literal('tool_call'),
    ...chunkBase,
    toolUseId: z.string(),
    toolName: z.string(),
    input: z.unknown(),
  }),
  z.strictObject({
    kind: z.literal('json_partial'),
    ...chunkBase,
    toolUseId: z.string().optional(),
    partialJson: z.string(),
  }),
  z.strictObject({
    kind: z.literal('status'),
    ...chunkBase,
    status: z.string(),
    message: z.string().optional(),
  }),
  z.strictObject({ kind: z.literal('final'), ...chunkBase, result: z.unknown() }),
]);
export type StreamChunk = z.infer<typeof StreamChunk>;

export const ToolDescriptor = z.strictObject({
  provider: z.enum(['acia', 'plugin', 'mcp']),
  namespace: z.string().min(1),
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/),
  version: z.string().min(1),
  description: z.string(),
  inputSchema: JsonObject,
  outputSchema: JsonObject,
  sideEffects: z.boolean(),
});
export type ToolDescriptor = z.infer<typeof ToolDescriptor>;
