// A run's state, as the one reducer table (reducer.ts) folds it from the ledger: nothing about a run
// lives only in memory. The executor applies each entry as it appends it; resume, replay, the wiki,
// the bundle, ACP, MCP, progress and `acia runs` fold the same entries with the same table, so they
// cannot disagree. This file is the state's shape and the questions asked of it.
import type { Plan, PlanSet, TaskSpec } from '../acm/contracts.js';
import type { EventDataOf } from '../ledger/events.js';
import type { EscalationReason, HumanAction } from '../ledger/run-vocabulary.js';
import type { PolicyLimits } from '../policy/policy.js';

export type TaskStatus = 'pending' | 'running' | 'completed' | 'failed' | 'skipped';

export interface TaskState {
  spec: TaskSpec;
  status: TaskStatus;
  attempts: number;
  output: Record<string, unknown> | null;
  /** What the last ending said: the completion summary, `<errorKind>: <message>` or why it was skipped. */
  summary: string;
  lastCheckpoint: string | null;
  branch: string | null;
  /** The worktree of the last attempt, when recorded. */
  worktree: string | null;
  merged: boolean;
  lastError: { kind: string; message: string } | null;
  lastVerification: EventDataOf<'VERIFICATION'> | null;
  /** Added by the iterate loop or a re-plan rather than the original plan. */
  addedBy: string | null;
  /** Set when a re-verify task replaced this one; edges out of it leave from the replacement. */
  supersededBy: string | null;
  /** Text from a human answer, passed to the next attempt. */
  guidance: string | null;
  /** A human approved the change policy denied. */
  policyOverride: boolean;
  /** Seq of the last TASK_FAILED: escalations after it are about this failure. */
  failedSeq: number;
  /** Why the task was skipped: a guard made it unreachable, a human chose to skip it, or it lost its predecessors. */
  skipCause: SkipCause | null;
  /** The last recorded PDP response about this task (task.post wins over task.pre): guards read it as `policy`. */
  policy: { hook: string; allow: boolean; reason?: string } | null;
  /** What the last task.pre allow granted the task's attempts (seed 000 §16: allow decisions may carry limits). */
  limits: { [K in keyof PolicyLimits]?: PolicyLimits[K] | undefined } | null;
  /** A human passed this human.approve checkpoint; its task.post and TASK_COMPLETED are still to be recorded. */
  approvalToRecord: boolean;
  /** The last recorded value of each of the task's verification expressions. */
  checks: Record<string, boolean>;
  /** A TASK_SKIPPED entry records the skip (a human's skip is applied before one is written). */
  skipLogged: boolean;
}

/**
 * `join`: the task waits for all its incoming branches (a declared `all` join, or a fan-in without a join,
 * which is `all`), some were taken and a guard closed another: the plan asked for all, so it cannot run.
 */
export type SkipCause = 'guard' | 'human' | 'upstream' | 'join';

/** A real test run (not a verification expression) as recorded. */
export interface TestRun {
  seq: number;
  taskId: string;
  exitCode: number | null;
  /** The commit whose tree was tested, when recorded. */
  commit: string | null;
}

export interface PendingEscalation {
  seq: number;
  reason: EscalationReason;
  taskId: string | undefined;
  message: string;
  /** The failure output the question came with, when there was one. */
  lastFailure: string | undefined;
  /** The answers this escalation takes, as recorded when it was asked. */
  options: HumanAction[];
  answer: EventDataOf<'HUMAN_RESPONSE'> | null;
  /** Seq of the HUMAN_RESPONSE, once answered. */
  answerSeq: number | null;
}

export interface RunState {
  runId: string | null;
  started: EventDataOf<'RUN_STARTED'> | null;
  /** The ts of the first entry. */
  startedAt: string | null;
  contextRef: string | null;
  /** The Context Packet itself (a blob). */
  packetRef: string | null;
  planSet: PlanSet | null;
  planAttempts: number;
  /** How the first plan was chosen, and at which seq. */
  selection: (EventDataOf<'PLAN_SELECTED'> & { seq: number }) | null;
  /** The plan in force: the chosen one, or the one a re-plan switched to, with the tasks and edges added while it ran. */
  plan: Plan | null;
  /** The tasks of the plan in force (and those added to it), in the order they joined it. */
  tasks: Map<string, TaskState>;
  /** Tasks of plans a re-plan abandoned, as they stood when it did. */
  retired: Map<string, TaskState>;
  /** `from->to` of guarded edges with their recorded value. */
  branches: Map<string, boolean>;
  escalations: PendingEscalation[];
  iterations: number;
  costUsd: number;
  costKnown: boolean;
  tokens: number;
  modelCalls: number;
  completed: EventDataOf<'RUN_COMPLETED'> | null;
  lastSeq: number;
  /** The hash of the last entry folded. */
  lastHash: string | null;
  replans: number;
  /** Each re-plan in order: which plan was abandoned for which, and why. */
  replanned: EventDataOf<'REPLAN_TRIGGERED'>[];
  abortRequested: boolean;
  /** Fix iterations a human granted beyond maxIterations. */
  extraIterations: number;
  budgetWaived: boolean;
  /** Lessons agents proposed, in ledger order; the first `lessonsApplied` are already on the memory page. */
  lessons: { taskId: string; text: string; seq: number }[];
  lessonsApplied: number;
  /** A MEMORY_UPDATED with no RUN_COMPLETED after it: the session died around its page write, which resume finishes. */
  lastMemoryUpdate: EventDataOf<'MEMORY_UPDATED'> | null;
  /** The run branch head after the last MERGE (or reset); null until one is recorded. */
  runHead: string | null;
  /** Real test runs in ledger order. */
  testRuns: TestRun[];
  /** The last plan.admit response: the policy scope of guards on edges whose source has no decision of its own. */
  admitPolicy: { allow: boolean; reason?: string } | null;
  /** The goal as amended by humans (GOAL_AMENDED), in order. */
  goalAmendments: string[];
  /** The grade `acia eval` appended after the run, if any. */
  evalGrade: EventDataOf<'EVAL_GRADED'> | null;
  /** Messages humans sent the PM or a task, in order, with whether an agent got them yet. */
  messages: RunMessage[];
  /** Spend per role (a task's role, or pm/dev/qa), from the LLM_CALL entries that name one. */
  roleSpend: Map<string, RoleSpend>;
  /** Task attempts started so far (TASK_STARTED entries). */
  taskStarts: number;
  /** The roles the session runs with, as ROLES_LOADED recorded them. */
  roles: EventDataOf<'ROLES_LOADED'> | null;
  /** The model and settings the latest session ran with (RUN_STARTED's, then each RUN_RESUMED's that recorded them). */
  settings: (EventDataOf<'RUN_STARTED'>['settings'] & { model: string }) | null;
  /** Someone cancelled the run (`acia cancel`): it does not go on. */
  cancelRequested: EventDataOf<'CANCEL_REQUESTED'> | null;
}

export interface RunMessage extends Omit<EventDataOf<'MESSAGE_RECEIVED'>, 'refused'> {
  seq: number;
  refused: string | null;
  delivered: EventDataOf<'MESSAGE_DELIVERED'> | null;
}

export interface RoleSpend {
  costUsd: number;
  costKnown: boolean;
  tokens: number;
  calls: number;
}

export function emptyRunState(): RunState {
  return {
    runId: null,
    started: null,
    startedAt: null,
    contextRef: null,
    packetRef: null,
    planSet: null,
    planAttempts: 0,
    selection: null,
    plan: null,
    tasks: new Map(),
    retired: new Map(),
    branches: new Map(),
    escalations: [],
    iterations: 0,
    costUsd: 0,
    costKnown: true,
    tokens: 0,
    modelCalls: 0,
    completed: null,
    lastSeq: -1,
    lastHash: null,
    replans: 0,
    replanned: [],
    abortRequested: false,
    extraIterations: 0,
    budgetWaived: false,
    lessons: [],
    lessonsApplied: 0,
    lastMemoryUpdate: null,
    runHead: null,
    testRuns: [],
    admitPolicy: null,
    goalAmendments: [],
    evalGrade: null,
    messages: [],
    roleSpend: new Map(),
    taskStarts: 0,
    roles: null,
    settings: null,
    cancelRequested: null,
  };
}

export function openEscalation(state: RunState): PendingEscalation | null {
  const last = state.escalations.at(-1);
  return last && last.answer === null ? last : null;
}

/**
 * Why a run cannot go on, or null when `acia resume` may continue it: a run that succeeded, failed
 * its verification with nobody to ask, that a human aborted or that someone cancelled is finished for
 * good. Interrupted, budget-stopped, waiting and errored runs can go on.
 */
export function finishedReason(state: RunState): string | null {
  if (state.abortRequested) return 'a human aborted it';
  if (state.cancelRequested !== null || state.completed?.reason === 'cancelled') return 'it was cancelled';
  const reason = state.completed?.reason;
  if (reason === 'succeeded') return 'it succeeded';
  if (reason === 'verification_failed') return 'its verification failed';
  return null;
}

/** A fixes_exhausted escalation answered with guidance or retry asks for one more fix iteration. */
export function wantsAnotherIteration(esc: PendingEscalation): boolean {
  return esc.reason === 'fixes_exhausted' && (esc.answer?.action === 'guidance' || esc.answer?.action === 'retry');
}

/** Messages to `to` (a task id or `pm`) that no agent has received yet. */
export function pendingMessages(state: RunState, to: string): RunMessage[] {
  return state.messages.filter((m) => m.to === to && m.refused === null && m.delivered === null);
}

/** A role's spend as readers report it: cost null when a call's model had no price. */
export interface RoleCost {
  role: string;
  costUsd: number | null;
  tokens: number;
  calls: number;
}

/** Spend per role (pm, dev, qa, and any role a plan named), in the order the roles first spent. */
export function roleCosts(state: Pick<RunState, 'roleSpend'>): RoleCost[] {
  return [...state.roleSpend].map(([role, r]) => ({ role, costUsd: r.costKnown ? Math.round(r.costUsd * 1e6) / 1e6 : null, tokens: r.tokens, calls: r.calls }));
}

/** `pm $0.0123 (3 calls), dev $0.2 (12 calls)`: per-role spend in one line. */
export function roleCostLine(costs: readonly RoleCost[]): string {
  return costs.map((c) => `${c.role} ${c.costUsd === null ? 'cost unknown' : `$${c.costUsd.toFixed(4)}`} (${c.calls} call${c.calls === 1 ? '' : 's'}, ${c.tokens} tokens)`).join(', ');
}
