// The fold itself: how each ledger entry changes a run's state. Kept apart from the state's shape
// (run-state.ts) because it is the one long switch every new entry type extends.
import type { LedgerEntry, Plan, TaskSpec } from '../core/acm/contracts.js';
import type { EventDataOf } from '../core/ledger/events.js';
import type { PendingEscalation, RunState, TaskState } from './run-state.js';

export function emptyRunState(): RunState {
  return {
    runId: null,
    started: null,
    contextRef: null,
    planSet: null,
    planAttempts: 0,
    plan: null,
    tasks: new Map(),
    branches: new Map(),
    escalations: [],
    iterations: 0,
    costUsd: 0,
    costKnown: true,
    tokens: 0,
    modelCalls: 0,
    completed: null,
    lastSeq: -1,
    replans: 0,
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
  };
}

/** Folds ledger entries into the run's state: the single source of truth for resume, replay and `acia runs`. */
export function foldRun(entries: Iterable<LedgerEntry>, state = emptyRunState()): RunState {
  for (const e of entries) applyEntry(state, e);
  return state;
}

function newTask(spec: TaskSpec, addedBy: string | null): TaskState {
  return {
    spec,
    status: 'pending',
    attempts: 0,
    output: null,
    lastCheckpoint: null,
    branch: null,
    merged: false,
    lastError: null,
    lastVerification: null,
    addedBy,
    supersededBy: null,
    guidance: null,
    policyOverride: false,
    failedSeq: -1,
    skipCause: null,
    policy: null,
    approvalToRecord: false,
    limits: null,
    checks: {},
    skipLogged: false,
  };
}

function usePlan(state: RunState, plan: Plan): void {
  state.plan = structuredClone(plan);
  state.tasks = new Map(plan.tasks.map((t) => [t.id, newTask(t, null)]));
  state.branches = new Map();
}

/** Applies one entry. Data is trusted as written by the team; verify checks the chain separately. */
export function applyEntry(state: RunState, entry: LedgerEntry): void {
  state.lastSeq = entry.seq;
  state.runId ??= entry.runId;
  const d = entry.data as never;
  switch (entry.type) {
    case 'RUN_STARTED':
      state.started = d;
      state.runHead = (d as EventDataOf<'RUN_STARTED'>).baseCommit;
      break;
    case 'RUN_RESUMED':
      state.completed = null;
      break;
    case 'CONTEXT_BUILT':
      state.contextRef = (d as EventDataOf<'CONTEXT_BUILT'>).contextRef;
      break;
    case 'PLAN_PROPOSED': {
      const p = d as EventDataOf<'PLAN_PROPOSED'>;
      state.planAttempts = Math.max(state.planAttempts, p.attempt);
      if (p.valid && p.planSet) state.planSet = p.planSet;
      break;
    }
    case 'PLAN_SELECTED': {
      const p = d as EventDataOf<'PLAN_SELECTED'>;
      const plan = state.planSet?.plans.find((x) => x.id === p.planId);
      if (plan) usePlan(state, plan);
      break;
    }
    case 'REPLAN_TRIGGERED': {
      const p = d as EventDataOf<'REPLAN_TRIGGERED'>;
      const plan = state.planSet?.plans.find((x) => x.id === p.toPlanId);
      state.replans++;
      if (plan) {
        const keep = state.tasks;
        usePlan(state, plan);
        // Tasks finished under the old plan stay recorded but the new plan starts clean.
        for (const [id, t] of keep) if (!state.tasks.has(id) && t.status === 'running') t.status = 'failed';
      }
      break;
    }
    case 'TASK_ADDED': {
      const p = d as EventDataOf<'TASK_ADDED'>;
      state.tasks.set(p.task.id, newTask(p.task, p.reason));
      if (p.reason === 'fix') state.iterations = Math.max(state.iterations, p.iteration);
      if (p.replaces !== undefined) {
        const old = state.tasks.get(p.replaces);
        if (old) old.supersededBy = p.task.id;
      }
      if (state.plan) {
        state.plan.tasks.push(p.task);
        state.plan.edges.push(...(p.edges ?? []));
      }
      break;
    }
    case 'BRANCH_TAKEN': {
      const p = d as EventDataOf<'BRANCH_TAKEN'>;
      state.branches.set(`${p.from}->${p.to}`, p.value);
      break;
    }
    case 'TASK_STARTED': {
      const p = d as EventDataOf<'TASK_STARTED'>;
      const t = state.tasks.get(p.taskId);
      if (t) {
        t.status = 'running';
        t.attempts = p.attempt;
        t.branch = p.branch ?? t.branch;
      }
      break;
    }
    case 'CHECKPOINT': {
      const p = d as EventDataOf<'CHECKPOINT'>;
      const t = state.tasks.get(p.taskId);
      if (t) t.lastCheckpoint = p.commit;
      break;
    }
    case 'MERGE': {
      const p = d as EventDataOf<'MERGE'>;
      const t = state.tasks.get(p.taskId);
      if (t && !p.conflict) t.merged = true;
      if (!p.conflict && p.commit !== null && p.commit !== state.runHead) {
        state.runHead = p.commit;
      }
      break;
    }
    case 'COMPENSATION_APPLIED': {
      // A re-plan resets the run branch to the base commit: tests run before it prove nothing about the new head.
      const p = d as EventDataOf<'COMPENSATION_APPLIED'>;
      if (state.plan && p.taskId === state.plan.id && p.resetTo !== state.runHead) {
        state.runHead = p.resetTo;
      }
      break;
    }
    case 'VERIFICATION': {
      const p = d as EventDataOf<'VERIFICATION'>;
      const t = state.tasks.get(p.taskId);
      if (t) {
        t.lastVerification = p;
        if (p.source === 'check') t.checks[p.command] = p.passed;
      }
      if (p.source !== 'check') state.testRuns.push({ seq: entry.seq, taskId: p.taskId, exitCode: p.exitCode, commit: p.commit ?? null });
      break;
    }
    case 'POLICY_DECISION': {
      const p = d as EventDataOf<'POLICY_DECISION'>;
      const response = { allow: p.response.allow, ...(p.response.reason === undefined ? {} : { reason: p.response.reason }) };
      if (p.hook === 'plan.admit') state.admitPolicy = response;
      const t = p.taskId === undefined ? undefined : state.tasks.get(p.taskId);
      // task.post judges the change itself; a later task.pre of a new attempt does not erase its verdict,
      // nor does the allow an attempt gets after a human overrode the denial (policy never said yes).
      const overridden = t?.policyOverride === true && t.policy?.hook === 'task.post' && !t.policy.allow;
      if (t && !overridden && (p.hook === 'task.post' || t.policy?.hook !== 'task.post')) t.policy = { hook: p.hook, ...response };
      if (t && p.hook === 'task.pre') t.limits = p.response.allow ? (p.response.limits ?? null) : null;
      break;
    }
    case 'GOAL_AMENDED':
      state.goalAmendments.push((d as EventDataOf<'GOAL_AMENDED'>).delta);
      break;
    case 'TASK_COMPLETED': {
      const p = d as EventDataOf<'TASK_COMPLETED'>;
      const t = state.tasks.get(p.taskId);
      if (t) {
        t.status = 'completed';
        t.output = p.output;
        t.approvalToRecord = false;
      }
      for (const text of p.lessons ?? []) state.lessons.push({ taskId: p.taskId, text, seq: entry.seq });
      break;
    }
    case 'TASK_FAILED': {
      const p = d as EventDataOf<'TASK_FAILED'>;
      const t = state.tasks.get(p.taskId);
      if (t) {
        t.status = 'failed';
        t.lastError = { kind: p.errorKind, message: p.message };
        t.failedSeq = entry.seq;
        t.approvalToRecord = false;
      }
      for (const text of p.lessons ?? []) state.lessons.push({ taskId: p.taskId, text, seq: entry.seq });
      break;
    }
    case 'MEMORY_UPDATED': {
      const p = d as EventDataOf<'MEMORY_UPDATED'>;
      state.lastMemoryUpdate = p;
      if (p.page === 'lessons') state.lessonsApplied = state.lessons.length;
      break;
    }
    case 'TASK_SKIPPED': {
      const p = d as EventDataOf<'TASK_SKIPPED'>;
      const t = state.tasks.get(p.taskId);
      if (t) {
        t.status = 'skipped';
        t.skipLogged = true;
        // Ledgers written before causes were recorded: a skip is only trusted as a guard's when it says so.
        t.skipCause = p.cause ?? t.skipCause ?? 'upstream';
      }
      break;
    }
    case 'ESCALATION_REQUESTED': {
      const p = d as EventDataOf<'ESCALATION_REQUESTED'>;
      state.escalations.push({ seq: entry.seq, reason: p.reason, taskId: p.taskId, message: p.message, options: p.options, answer: null });
      break;
    }
    case 'HUMAN_RESPONSE': {
      const p = d as EventDataOf<'HUMAN_RESPONSE'>;
      const esc = state.escalations.find((x) => x.seq === p.escalationSeq);
      if (esc) {
        esc.answer = p;
        applyHumanAnswer(state, esc, p);
      }
      break;
    }
    case 'LLM_CALL': {
      const p = d as EventDataOf<'LLM_CALL'>;
      state.modelCalls++;
      state.tokens += p.usage.inputTokens + p.usage.outputTokens + p.usage.cacheReadTokens + p.usage.cacheWriteTokens;
      if (p.costUsd === null) state.costKnown = false;
      else state.costUsd += p.costUsd;
      break;
    }
    case 'RUN_COMPLETED':
      state.completed = d;
      // A session that recorded RUN_COMPLETED got past its page write: nothing to finish on resume.
      state.lastMemoryUpdate = null;
      break;
    default:
      break;
  }
}

/**
 * What a human answer changes. Kept in the fold (not in follow-up entries) so a crash right after the
 * answer loses nothing: resume folds the same state.
 */
function applyHumanAnswer(state: RunState, esc: PendingEscalation, a: EventDataOf<'HUMAN_RESPONSE'>): void {
  if (a.action === 'abort') {
    state.abortRequested = true;
    return;
  }
  if (esc.reason === 'budget_exceeded') {
    // approve: go on past the limit. retry: the human raised the limit; the budget keeps applying.
    if (a.action === 'approve') state.budgetWaived = true;
    return;
  }
  const t = esc.taskId === undefined ? undefined : state.tasks.get(esc.taskId);
  if (!t) return;
  if (a.text !== undefined) t.guidance = a.text;
  if (a.action === 'skip') {
    t.status = 'skipped';
    t.skipCause = 'human';
    return;
  }
  switch (esc.reason) {
    case 'human_approve':
      // approve, retry and guidance all let the checkpoint pass; the text is kept as a note.
      t.status = 'completed';
      t.output = { approved: true, ...(a.text === undefined ? {} : { note: a.text }) };
      t.approvalToRecord = true;
      return;
    case 'fixes_exhausted':
      state.extraIterations++;
      return;
    case 'policy_denied':
      t.policyOverride = a.action === 'approve';
      t.status = 'pending';
      return;
    case 'merge_conflict':
      t.lastCheckpoint = null;
      t.status = 'pending';
      return;
    default:
      t.status = 'pending';
  }
}
