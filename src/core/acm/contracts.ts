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

export const Goal = z.strictObject({
  id: z.string().min(1),
  intent: z.string().min(1),
  constraints: JsonObject.default({}),
  contextRequired: z.boolean().default(true),
  contextRef: ContentRef.optional(),
});
export type Goal = z.infer<typeof Goal>;

export const ContextSource = z.strictObject({
  uri: z.string().min(1),
  digest: ContentRef.optional(),
  excerpt: z.string().optional(),
});

/** The immutable planning input (ACM §9); its content address is the plans' `contextRef`. */
export const ContextPacket = z.strictObject({
  id: z.string().min(1),
  version: z.string().default('1'),
  goalId: z.string().min(1),
  sources: z.array(ContextSource),
  facts: JsonObject,
  assumptions: z.array(z.string()),
  constraints: JsonObject,
  provenance: z.strictObject({
    builder: z.string().min(1),
    createdAt: z.string().optional(),
    repoHead: z.string().optional(),
    models: z.array(z.string()).optional(),
  }),
});
export type ContextPacket = z.infer<typeof ContextPacket>;

export const RetryPolicy = z.strictObject({
  attempts: z.number().int().min(1).max(20).default(1),
  backoff: z.enum(['fixed', 'exp']).default('exp'),
  baseMs: z.number().int().min(0).max(600_000).default(1000),
  jitter: z.boolean().default(true),
});
export type RetryPolicy = z.infer<typeof RetryPolicy>;

export const TaskSpec = z.strictObject({
  id: TaskId,
  capability: z.string().min(1),
  title: z.string().optional(),
  input: JsonObject.default({}),
  retry: RetryPolicy.optional(),
  idemKey: z.string().optional(),
  verification: z.array(z.string()).default([]),
  policyInput: JsonObject.optional(),
});
export type TaskSpec = z.infer<typeof TaskSpec>;

export const ErrorKind = z.enum(['RETRYABLE_ERROR', 'FATAL_ERROR', 'COMPENSATION_REQUIRED']);
export type ErrorKind = z.infer<typeof ErrorKind>;

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

export const Capability = z.strictObject({
  name: z.string().min(1),
  description: z.string(),
  actor: z.enum(['pm', 'dev', 'qa', 'human']),
  sideEffects: z.boolean(),
  inputSchema: JsonObject.optional(),
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
