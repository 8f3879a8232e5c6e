// The data payload of each ledger entry type, with its version: the one table entry types come from.
// The team writes these; every reader gets them parsed (core/ledger/entry.ts). Objects are not strict
// (extra keys are dropped, not refused) so older readers accept newer writers' additions.
import { z } from 'zod';
import { Edge, ErrorKind, Goal, Plan, PlanSet, TaskSpec } from '../acm/contracts.js';
import { HOOK_EVENTS } from '../hooks/events.js';
import { BlobRef, LlmCallV1, LlmCallV2 } from './llm-call-data.js';
import { EscalationReason, HumanAction, TerminalReason } from './run-vocabulary.js';

/** The user hook behind a POLICY_DECISION: its name, the point it was configured under, its command and where it was configured. */
const HookIdentity = z.object({ name: z.string(), on: z.string(), command: z.string(), sandbox: z.boolean(), source: z.string().nullable() });

/** The settings a session of a run ran with (RUN_STARTED, and each RUN_RESUMED since they were recorded). */
const RunSettings = z.object({
  parallel: z.number(),
  maxIterations: z.number(),
  sandbox: z.string(),
  budget: z.object({ maxCostUsd: z.number().optional(), maxTokens: z.number().optional(), maxMinutes: z.number().optional() }),
  /** Whether agents' lessons go to the memory page (absent in runs made before the setting existed). */
  memoryLessons: z.boolean().optional(),
  /** Models given per role (`--model pm=...,dev=...`), beside `model` for every other role. */
  roleModels: z.record(z.string(), z.string()).optional(),
  /** `--approve-plan`: a human approves the plan before any task runs. */
  approvePlan: z.boolean().optional(),
});

export const EventData = {
  RUN_STARTED: z.object({
    goal: Goal,
    repo: z.string(),
    baseCommit: z.string(),
    baseBranch: z.string().nullable(),
    runBranch: z.string(),
    model: z.string(),
    settings: RunSettings,
    aciaVersion: z.string(),
    /** `acia exec`: the saved plan set as given (a blob) and whether it may be re-bound to this run's packet. */
    exec: z.object({ planSetRef: BlobRef, rebindContext: z.boolean() }).optional(),
    /** `acia plan --context <file>`: the Context Packet given by the caller (a blob), planned from instead of a built one. */
    contextPacketRef: BlobRef.optional(),
    /** `acia plan`: the run stops once a plan is chosen. */
    planOnly: z.boolean().optional(),
    /** The ACM version whose artifacts and ledger this run records. */
    acmVersion: z.string().optional(),
  }),
  RUN_RESUMED: z.object({
    pid: z.number(),
    answer: z.string().optional(),
    /** The model and settings this session ran with (absent in runs resumed before they were recorded). */
    model: z.string().optional(),
    settings: RunSettings.optional(),
  }),
  CONTEXT_BUILT: z.object({ contextRef: BlobRef, packetRef: BlobRef, summary: z.string() }),
  /**
   * What the planner read from the repository beyond the packet (ACM v0.5 §5.3.4 internal context scope):
   * each read's output, content-addressed (the blob `digest`), private to the planning step.
   */
  CONTEXT_INTERNALIZED: z.object({
    taskId: z.string(),
    artifacts: z.array(
      z.object({
        /** `<tool>:<what it read>`, e.g. `read_file:src/cli.ts`. */
        uri: z.string(),
        tool: z.string(),
        toolUseId: z.string(),
        input: z.unknown(),
        digest: BlobRef,
        scope: z.literal('internal'),
      }),
    ),
    rationale: z.string(),
  }),
  PLAN_PROPOSED: z.object({
    attempt: z.number(),
    planSet: PlanSet.optional(),
    valid: z.boolean(),
    problems: z.array(z.object({ path: z.string(), message: z.string() })),
  }),
  PLAN_SELECTED: z.object({
    planId: z.string(),
    method: z.enum(['human', 'policy', 'llm']),
    rationale: z.string(),
    alternatives: z.array(z.string()),
  }),
  BRANCH_TAKEN: z.object({
    from: z.string(),
    to: z.string(),
    guard: z.string(),
    value: z.boolean(),
    /** Set when the edge is an error edge: the failure kind it routed. */
    onError: ErrorKind.optional(),
    /** What the guard saw as `policy` (the recorded PDP response), so a reader can check the value. */
    policy: z.object({ allow: z.boolean(), reason: z.string().optional() }).optional(),
  }),
  POLICY_DECISION: z.object({
    /** The point: ACM's three, `agent.permission` (an external ACP agent asked before a tool call), or a user hook's (docs/hooks.md). */
    hook: z.enum([...HOOK_EVENTS, 'agent.permission']),
    taskId: z.string().optional(),
    request: z.unknown(),
    /**
     * A hook's answer may also carry `stop` (it said `continue: false`), `context` (text for the agent),
     * `failure` (it crashed, timed out, could not start or printed a garbled answer) and `feedback` (the
     * denial went back to the agent, which kept working). `limits`: what an allow granted the task (its
     * commands' timeout, its retries).
     */
    response: z.object({ allow: z.boolean(), reason: z.string().optional(), limits: z.object({ timeoutMs: z.number().optional(), retries: z.number().optional() }).optional() }).loose(),
    /** A user hook's decision: which hook decided (absent: the policy engine). */
    by: HookIdentity.optional(),
    /** The document the hook read on stdin, stored as this blob. */
    inputDigest: BlobRef.optional(),
    /** How the hook process ended and what it printed (each stream cut in the middle past a few KB). */
    output: z.object({ exitCode: z.number().nullable(), signal: z.string().nullable(), timedOut: z.boolean(), stdout: z.string(), stderr: z.string() }).optional(),
    durationMs: z.number().optional(),
  }),
  REPLAN_TRIGGERED: z.object({
    cause: z.string(),
    fromPlanId: z.string(),
    toPlanId: z.string(),
    scope: z.string(),
    /** A summary of how the new plan differs from the abandoned one (absent in older runs). */
    diff: z.string().optional(),
  }),
  COMPENSATION_APPLIED: z.object({
    taskId: z.string(),
    reason: z.string(),
    resetTo: z.string(),
    /** Set when a fleet worker running the task went away (why): the attempt restarts on another worker. */
    handoutLost: z.string().optional(),
  }),
  GOAL_AMENDED: z.object({ by: z.string(), delta: z.string() }),
  TASK_ADDED: z.object({
    task: TaskSpec,
    /** Edges that wire the new task into the plan. */
    edges: z.array(Edge).default([]),
    /** compensation: the compensation a failed task's spec declares (ACM v0.5 §5.5 `compensation`), wired by an error edge. */
    reason: z.enum(['fix', 'reverify', 'replan', 'human', 'merge', 'compensation']),
    parent: z.string().optional(),
    /** A task this one supersedes: edges out of the replaced task now leave from this one. */
    replaces: z.string().optional(),
    iteration: z.number(),
  }),
  TASK_STARTED: z.object({
    taskId: z.string(),
    attempt: z.number(),
    capability: z.string(),
    branch: z.string().optional(),
    worktree: z.string().optional(),
    baseCommit: z.string().optional(),
    /** The fleet worker that ran this attempt (absent for local runs). */
    worker: z.string().optional(),
    /** The role that ran it and the sha256 of its definition (ROLES_LOADED holds the definition). */
    role: z.object({ name: z.string(), digest: z.string() }).optional(),
  }),
  /** Version 2 (EVENT_VERSION): `request`, a request stored as a delta of the one before it, and `response` inline. */
  LLM_CALL: LlmCallV2,
  TOOL_CALL: z.object({ taskId: z.string().optional(), toolUseId: z.string(), name: z.string(), input: z.unknown() }),
  TOOL_RESULT: z.object({
    taskId: z.string().optional(),
    toolUseId: z.string(),
    name: z.string(),
    ok: z.boolean(),
    outputRef: BlobRef,
    data: z.record(z.string(), z.unknown()).optional(),
    durationMs: z.number(),
  }),
  CHECKPOINT: z.object({ taskId: z.string(), attempt: z.number(), commit: z.string(), branch: z.string(), files: z.array(z.string()) }),
  /** The MCP servers a session started and the tools they offer; the full catalog is the blob. */
  MCP_TOOLS: z.object({
    catalogRef: BlobRef,
    servers: z.array(z.object({ name: z.string(), source: z.string(), error: z.string().nullable(), tools: z.number(), pending: z.boolean().optional() })),
  }),
  MERGE: z.object({ taskId: z.string(), into: z.string(), commit: z.string().nullable(), conflict: z.boolean(), files: z.array(z.string()) }),
  /** Best-of-N: every candidate's recorded facts, the winner and why (tests, failures, diff, cost). */
  CANDIDATES_JUDGED: z.object({
    taskId: z.string(),
    attempt: z.number(),
    candidates: z.array(
      z.object({
        agent: z.string(),
        branch: z.string(),
        commit: z.string().nullable(),
        finished: z.boolean(),
        testsPassed: z.boolean(),
        exitCode: z.number().nullable(),
        failedCount: z.number().nullable(),
        files: z.number(),
        diffLines: z.number(),
        costUsd: z.number(),
        /** Why it did not finish (its error, stop reason or time limit); absent when it finished. */
        notFinished: z.string().optional(),
      }),
    ),
    winner: z.string().nullable(),
    rationale: z.string(),
  }),
  VERIFICATION: z.object({
    taskId: z.string(),
    passed: z.boolean(),
    exitCode: z.number().nullable(),
    command: z.string(),
    passedCount: z.number().nullable(),
    failedCount: z.number().nullable(),
    outputRef: BlobRef,
    source: z.enum(['qa_run', 'team_run', 'check']),
    /** The commit whose tree the tests ran on (absent in older runs and for expression checks). */
    commit: z.string().optional(),
    /** Why the command could not run at all (the "not found" line), when that is why it failed. */
    cannotRun: z.string().optional(),
  }),
  RETRY_SCHEDULED: z.object({ taskId: z.string(), attempt: z.number(), delayMs: z.number(), reason: z.string() }),
  ESCALATION_REQUESTED: z.object({
    reason: EscalationReason,
    taskId: z.string().optional(),
    message: z.string(),
    lastFailure: z.string().optional(),
    options: z.array(HumanAction),
  }),
  HUMAN_RESPONSE: z.object({ escalationSeq: z.number(), action: HumanAction, text: z.string().optional() }),
  MEMORY_UPDATED: z.object({ page: z.string(), beforeRef: BlobRef.nullable(), afterRef: BlobRef, reason: z.string() }),
  BUDGET_EXCEEDED: z.object({
    limit: z.enum(['cost', 'tokens', 'minutes', 'iterations']),
    spent: z.number(),
    max: z.number(),
    /** The part of `spent` held by other calls still under way (a budget shared across a fleet's workers). */
    inFlight: z.number().optional(),
    /** Set when the limit is a role's own budget (its role file), not the run's. */
    role: z.string().optional(),
  }),
  TASK_COMPLETED: z.object({
    taskId: z.string(),
    attempt: z.number(),
    output: z.record(z.string(), z.unknown()),
    summary: z.string(),
    /** Lessons the agent proposed for the memory page `lessons`; the team appends them when the session ends. */
    lessons: z.array(z.string()).optional(),
    /** Idempotency: the task whose recorded result this one reused (same idemKey), nothing having run again. */
    reusedFrom: z.string().optional(),
    /** The resolved idemKey the result was reused under. */
    idemKey: z.string().optional(),
  }),
  TASK_FAILED: z.object({ taskId: z.string(), attempt: z.number(), errorKind: ErrorKind, message: z.string(), lessons: z.array(z.string()).optional() }),
  TASK_SKIPPED: z.object({
    taskId: z.string(),
    reason: z.string(),
    /**
     * guard: every way in was a guard that held false; human: a human answered skip; upstream: a predecessor
     * failed or was skipped; join: a join waiting for all its branches saw one taken and another closed.
     */
    cause: z.enum(['guard', 'human', 'upstream', 'join']).optional(),
  }),
  /**
   * The roles a session runs with: each one's definition as a blob (prompt, tools, model, budget, max turns),
   * where it came from and its sha256, so a replay uses the recorded roles, never the files as they are now.
   */
  ROLES_LOADED: z.object({
    roles: z.array(
      z.object({
        name: z.string(),
        base: z.enum(['pm', 'dev', 'qa']),
        format: z.enum(['builtin', 'acia', 'claude', 'codex']),
        source: z.string(),
        digest: z.string(),
        ref: BlobRef,
        /** The model the role's agents use when it is not the run's: as given, and the id its requests carry. */
        model: z.object({ spec: z.string(), id: z.string() }).optional(),
      }),
    ),
    skills: z.array(z.object({ name: z.string(), source: z.string(), digest: z.string(), ref: BlobRef })).default([]),
  }),
  /** A message from a human to the PM or a task (`acia say`, ACP, MCP, the web view), as the running session took it in. */
  MESSAGE_RECEIVED: z.object({
    id: z.string(),
    author: z.string(),
    /** A task id, or `pm`. */
    to: z.string(),
    mode: z.enum(['queue', 'steer', 'interrupt']),
    text: z.string(),
    /** Why it will not be delivered (the task had finished), when it will not. */
    refused: z.string().optional(),
  }),
  /** A message reached an agent: at the start of a turn, after a tool call, in place of an interrupted model call, or before a result was taken. */
  MESSAGE_DELIVERED: z.object({
    id: z.string(),
    /** The task whose agent got it (`plan` for the PM planning, `amend` for the PM amending the plan). */
    taskId: z.string(),
    caller: z.string(),
    turn: z.number(),
    at: z.enum(['turn', 'tool_boundary', 'interrupt', 'result']),
    afterToolUseId: z.string().optional(),
    /** For the PM amending the plan: how many task attempts had started, where the executor paused for it. */
    tasksStarted: z.number().optional(),
  }),
  /**
   * The plan in force changed without a re-plan: a human edited it at the approval gate, or the PM amended
   * it after a message. Without `plan` the PM kept the plan as it was (its rationale says why).
   */
  PLAN_AMENDED: z.object({
    by: z.string(),
    planId: z.string(),
    plan: Plan.optional(),
    diff: z.string(),
    rationale: z.string(),
    messageIds: z.array(z.string()).optional(),
  }),
  LEDGER_RECOVERED: z.object({ truncatedBytes: z.number(), reason: z.string() }),
  /**
   * `acia cancel`: who asked the run to stop, and when. Recorded by the process that stops the run (the one
   * running it, or the one that closes a run nobody runs), right before RUN_COMPLETED `cancelled`.
   */
  CANCEL_REQUESTED: z.object({
    /** Who asked: the local user and host, or the fleet submitter's database role. */
    by: z.string(),
    requestedAt: z.string(),
    /** Where the request came from: a request file beside a local run's ledger, or the fleet run's row. */
    via: z.enum(['local', 'fleet']),
    /** The run's state when the request took effect: running (it stopped at a safe point), or stopped already. */
    wasRunning: z.boolean(),
  }),
  RUN_COMPLETED: z.object({
    reason: TerminalReason,
    message: z.string(),
    runBranch: z.string(),
    headCommit: z.string().nullable(),
    filesChanged: z.array(z.string()),
    costUsd: z.number().nullable(),
    tokens: z.number(),
    durationMs: z.number(),
  }),
  /** `acia eval`: the grade of the run branch, appended after RUN_COMPLETED by the harness, outside the agents' reach. */
  EVAL_GRADED: z.object({
    instanceId: z.string(),
    resolved: z.boolean(),
    /** The commit graded (the run branch head), null when the run left no branch. */
    commit: z.string().nullable(),
    testPatchRef: BlobRef.nullable(),
    failToPass: z.record(z.string(), z.enum(['passed', 'failed', 'missing'])),
    passToPass: z.record(z.string(), z.enum(['passed', 'failed', 'missing'])),
    exitCode: z.number().nullable(),
    outputRef: BlobRef,
    /** Why grading could not run the tests (the patch did not apply, setup failed); absent when they ran. */
    error: z.string().optional(),
    /** Files the model's patch changed that decide how tests run; graded as the base and the test patch have them. */
    tamperedFiles: z.array(z.string()).optional(),
  }),
} satisfies Record<string, z.ZodType>;

/** Every entry type, in the order of the table above. */
export type LedgerEntryType = keyof typeof EventData;
export const LEDGER_ENTRY_TYPES = Object.keys(EventData) as [LedgerEntryType, ...LedgerEntryType[]];
export const LedgerEntryType = z.enum(LEDGER_ENTRY_TYPES);

export type EventDataOf<T extends LedgerEntryType> = z.infer<(typeof EventData)[T]>;
/** What a writer passes for an entry type (fields with defaults may be left out). */
export type EventInputOf<T extends LedgerEntryType> = z.input<(typeof EventData)[T]>;

/**
 * Payload versions. An entry's `v` (absent: 1) is the version of the schema its data was written with;
 * the table above is each type's current version, EVENT_VERSION says which one that is (absent: 1).
 * Changing a payload so that old data no longer parses (a new required field, a renamed or re-typed
 * one) is a new version: raise the type's number here and move its old schema to OLDER_EVENT_DATA with
 * an upgrade to the next version's input. Readers then read every ledger ever written as the current
 * type; an entry whose version is newer than this build knows is refused with a clear message.
 * A field that may simply be absent in older runs needs no new version: make it optional.
 */
export const EVENT_VERSION: { readonly [K in LedgerEntryType]?: number } = { LLM_CALL: 2 };

export interface OlderEventData {
  schema: z.ZodType;
  /** The payload as the next version's input. */
  upgrade: (old: unknown) => unknown;
}
export const OLDER_EVENT_DATA: { readonly [K in LedgerEntryType]?: Readonly<Record<number, OlderEventData>> } = {
  // Version 1 had no `request` or `response`: both were always blobs, which version 2 reads as it is.
  LLM_CALL: { 1: { schema: LlmCallV1, upgrade: (old) => old } },
};
