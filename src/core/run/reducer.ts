// The one reducer table: how each ledger entry type changes a run's state. Every reader of a run folds
// with it (the executor as it records, resume, replay, the wiki, the bundle, ACP, MCP, progress). A type
// with no entry here leaves the state as it was, apart from the head (seq, hash) every entry moves.
import type { Plan, TaskSpec } from '../acm/contracts.js';
import type { EntryOf, LedgerEntry } from '../ledger/entry.js';
import type { EventDataOf, LedgerEntryType } from '../ledger/events.js';
import { emptyRunState, type PendingEscalation, type RunState, type TaskState } from './state.js';

type Reducer<K extends LedgerEntryType> = (state: RunState, data: EventDataOf<K>, entry: EntryOf<K>) => void;

/** The points where a user hook's denial is the point's verdict on the plan or the task. */
const HOOK_VERDICT_POINTS: ReadonlySet<string> = new Set(['plan.admit', 'task.created', 'task.pre', 'task.post', 'task.merge']);

/** Data is trusted as parsed on read (core/ledger/entry.ts); verify checks the chain separately. */
export const REDUCERS: { readonly [K in LedgerEntryType]?: Reducer<K> } = {
  RUN_STARTED: (s, d) => {
    s.started = d;
    s.runHead = d.baseCommit;
    s.settings = { ...d.settings, model: d.model };
  },
  RUN_RESUMED: (s, d) => {
    s.completed = null;
    if (d.settings) s.settings = { ...d.settings, model: d.model ?? s.settings?.model ?? '' };
  },
  CONTEXT_BUILT: (s, d) => {
    s.contextRef = d.contextRef;
    s.packetRef = d.packetRef;
  },
  PLAN_PROPOSED: (s, d) => {
    s.planAttempts = Math.max(s.planAttempts, d.attempt);
    if (d.valid && d.planSet) s.planSet = d.planSet;
  },
  PLAN_SELECTED: (s, d, e) => {
    s.selection = { ...d, seq: e.seq };
    const plan = s.planSet?.plans.find((x) => x.id === d.planId);
    if (plan) usePlan(s, plan);
  },
  REPLAN_TRIGGERED: (s, d) => {
    const plan = s.planSet?.plans.find((x) => x.id === d.toPlanId);
    s.replans++;
    s.replanned.push(d);
    if (!plan) return;
    const old = s.tasks;
    usePlan(s, plan);
    // The new plan starts clean; the old plan's tasks are kept as they stood, one still running counts as failed.
    for (const [id, t] of old) {
      if (s.tasks.has(id)) continue;
      if (t.status === 'running') t.status = 'failed';
      s.retired.set(id, t);
    }
  },
  TASK_ADDED: (s, d) => {
    s.tasks.set(d.task.id, newTask(d.task, d.reason));
    if (d.reason === 'fix') s.iterations = Math.max(s.iterations, d.iteration);
    if (d.replaces !== undefined) {
      const old = s.tasks.get(d.replaces);
      if (old) old.supersededBy = d.task.id;
    }
    if (s.plan) {
      s.plan.tasks.push(d.task);
      s.plan.edges.push(...d.edges);
    }
  },
  BRANCH_TAKEN: (s, d) => {
    s.branches.set(`${d.from}->${d.to}`, d.value);
  },
  TASK_STARTED: (s, d) => {
    s.taskStarts++;
    const t = s.tasks.get(d.taskId);
    if (!t) return;
    t.status = 'running';
    t.attempts = d.attempt;
    t.branch = d.branch ?? t.branch;
    t.worktree = d.worktree ?? t.worktree;
  },
  CHECKPOINT: (s, d) => {
    const t = s.tasks.get(d.taskId);
    if (t) t.lastCheckpoint = d.commit;
  },
  MERGE: (s, d) => {
    const t = s.tasks.get(d.taskId);
    if (t && !d.conflict) t.merged = true;
    if (!d.conflict && d.commit !== null && d.commit !== s.runHead) s.runHead = d.commit;
  },
  COMPENSATION_APPLIED: (s, d) => {
    // A re-plan resets the run branch to the base commit: tests run before it prove nothing about the new head.
    if (s.plan && d.taskId === s.plan.id && d.resetTo !== s.runHead) s.runHead = d.resetTo;
  },
  VERIFICATION: (s, d, e) => {
    const t = s.tasks.get(d.taskId);
    if (t) {
      t.lastVerification = d;
      if (d.source === 'check') t.checks[d.command] = d.passed;
    }
    if (d.source !== 'check') s.testRuns.push({ seq: e.seq, taskId: d.taskId, exitCode: d.exitCode, commit: d.commit ?? null });
  },
  POLICY_DECISION: (s, d) => {
    // A user hook only ever adds a denial to its point's verdict (the engine's entry came first and set
    // it); at a tool call, a notification or a completion gate the agent got back, it decides nothing here.
    if (d.by !== undefined && (d.response.allow || !HOOK_VERDICT_POINTS.has(d.hook) || d.response.feedback === true)) return;
    const response = { allow: d.response.allow, ...(d.response.reason === undefined ? {} : { reason: d.response.reason }) };
    if (d.hook === 'plan.admit') s.admitPolicy = response;
    const t = d.taskId === undefined ? undefined : s.tasks.get(d.taskId);
    // task.post judges the change itself; a later task.pre of a new attempt does not erase its verdict,
    // nor does the allow an attempt gets after a human overrode the denial (policy never said yes).
    const overridden = t?.policyOverride === true && t.policy?.hook === 'task.post' && !t.policy.allow;
    // task.merge judges the change too, as task.post does.
    const hook = d.hook === 'task.merge' ? 'task.post' : d.hook;
    if (t && !overridden && (hook === 'task.post' || t.policy?.hook !== 'task.post')) t.policy = { hook, ...response };
    // What an allow grants (limits) holds for the attempts that allow let start.
    if (t && d.hook === 'task.pre') t.limits = d.response.allow ? (d.response.limits ?? null) : null;
  },
  GOAL_AMENDED: (s, d) => {
    s.goalAmendments.push(d.delta);
  },
  TASK_COMPLETED: (s, d, e) => {
    const t = s.tasks.get(d.taskId);
    if (t) {
      t.status = 'completed';
      t.output = d.output;
      t.summary = d.summary;
      t.approvalToRecord = false;
    }
    for (const text of d.lessons ?? []) s.lessons.push({ taskId: d.taskId, text, seq: e.seq });
  },
  TASK_FAILED: (s, d, e) => {
    const t = s.tasks.get(d.taskId);
    if (t) {
      t.status = 'failed';
      t.lastError = { kind: d.errorKind, message: d.message };
      t.summary = `${d.errorKind}: ${d.message}`;
      t.failedSeq = e.seq;
      t.approvalToRecord = false;
    }
    for (const text of d.lessons ?? []) s.lessons.push({ taskId: d.taskId, text, seq: e.seq });
  },
  MEMORY_UPDATED: (s, d) => {
    s.lastMemoryUpdate = d;
    if (d.page === 'lessons') s.lessonsApplied = s.lessons.length;
  },
  TASK_SKIPPED: (s, d) => {
    const t = s.tasks.get(d.taskId);
    if (!t) return;
    t.status = 'skipped';
    t.skipLogged = true;
    // Ledgers written before causes were recorded: a skip is only trusted as a guard's when it says so.
    t.skipCause = d.cause ?? t.skipCause ?? 'upstream';
    t.summary = t.skipCause === 'human' ? 'skipped by a human' : d.reason;
  },
  ESCALATION_REQUESTED: (s, d, e) => {
    s.escalations.push({ seq: e.seq, reason: d.reason, taskId: d.taskId, message: d.message, lastFailure: d.lastFailure, options: d.options, answer: null, answerSeq: null });
  },
  HUMAN_RESPONSE: (s, d, e) => {
    const esc = s.escalations.find((x) => x.seq === d.escalationSeq);
    if (!esc) return;
    esc.answer = d;
    esc.answerSeq = e.seq;
    applyHumanAnswer(s, esc, d);
  },
  LLM_CALL: (s, d) => {
    s.modelCalls++;
    const tokens = d.usage.inputTokens + d.usage.outputTokens + d.usage.cacheReadTokens + d.usage.cacheWriteTokens;
    s.tokens += tokens;
    if (d.costUsd === null) s.costKnown = false;
    else s.costUsd += d.costUsd;
    if (d.role !== undefined) {
      const r = s.roleSpend.get(d.role) ?? { costUsd: 0, costKnown: true, tokens: 0, calls: 0 };
      r.calls++;
      r.tokens += tokens;
      if (d.costUsd === null) r.costKnown = false;
      else r.costUsd += d.costUsd;
      s.roleSpend.set(d.role, r);
    }
  },
  ROLES_LOADED: (s, d) => {
    s.roles = d;
  },
  MESSAGE_RECEIVED: (s, d, e) => {
    // One message, one record: a second record of an id (a fleet claim that lapsed while its holder was
    // still recording) must not leave a copy pending that every later turn would be handed again.
    if (s.messages.some((x) => x.id === d.id)) return;
    s.messages.push({ ...d, seq: e.seq, refused: d.refused ?? null, delivered: null });
  },
  MESSAGE_DELIVERED: (s, d) => {
    const m = s.messages.find((x) => x.id === d.id);
    if (m) m.delivered = d;
  },
  PLAN_AMENDED: (s, d) => {
    if (d.plan) amendPlan(s, d.plan);
  },
  CANCEL_REQUESTED: (s, d) => {
    s.cancelRequested = d;
  },
  RUN_COMPLETED: (s, d) => {
    s.completed = d;
    // A session that recorded RUN_COMPLETED got past its page write: nothing to finish on resume.
    s.lastMemoryUpdate = null;
  },
  EVAL_GRADED: (s, d) => {
    s.evalGrade = d;
  },
};

/** Folds ledger entries into a run's state: the single source of truth for every reader of a run. */
export function foldRun(entries: Iterable<LedgerEntry>, state = emptyRunState()): RunState {
  for (const e of entries) applyEntry(state, e);
  return state;
}

/** Applies one entry. */
export function applyEntry(state: RunState, entry: LedgerEntry): void {
  state.lastSeq = entry.seq;
  state.lastHash = entry.hash;
  state.runId ??= entry.runId;
  state.startedAt ??= entry.ts;
  reduce(state, entry);
}

function reduce<K extends LedgerEntryType>(state: RunState, entry: EntryOf<K>): void {
  const reducer: Reducer<K> | undefined = REDUCERS[entry.type];
  reducer?.(state, entry.data, entry);
}

function newTask(spec: TaskSpec, addedBy: string | null): TaskState {
  return {
    spec,
    status: 'pending',
    attempts: 0,
    output: null,
    summary: '',
    lastCheckpoint: null,
    branch: null,
    worktree: null,
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
    limits: null,
    approvalToRecord: false,
    checks: {},
    skipLogged: false,
  };
}

/**
 * A plan amended in place (a human's edit at the approval gate, the PM after a message): tasks it keeps go on
 * as they stood, new ones start pending, dropped ones (only pending ones may be dropped) retire. Before a
 * plan is chosen the amendment replaces the proposed plan of the same id.
 */
function amendPlan(state: RunState, plan: Plan): void {
  if (state.planSet) state.planSet = { ...state.planSet, plans: state.planSet.plans.map((p) => (p.id === plan.id ? plan : p)) };
  if (state.plan?.id !== plan.id) return;
  const old = state.tasks;
  state.plan = structuredClone(plan);
  state.tasks = new Map(plan.tasks.map((t) => [t.id, old.get(t.id) ?? newTask(t, 'amend')]));
  for (const [id, t] of old) if (!state.tasks.has(id)) state.retired.set(id, t);
  for (const t of plan.tasks) {
    const kept = state.tasks.get(t.id);
    if (kept) kept.spec = t;
  }
}

function usePlan(state: RunState, plan: Plan): void {
  state.plan = structuredClone(plan);
  state.tasks = new Map(plan.tasks.map((t) => [t.id, newTask(t, null)]));
  state.branches = new Map();
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
    t.summary = 'skipped by a human';
    return;
  }
  switch (esc.reason) {
    case 'human_approve':
      // approve, retry and guidance all let the checkpoint pass; the text is kept as a note.
      // The team then records task.post over the approval and the task's TASK_COMPLETED (approvalToRecord).
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
