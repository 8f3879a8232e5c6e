// What the wiki shows of a run: goal, plans, tasks and verdicts, escalations, cost, end. Read from the
// run state the one reducer folds (core/run), so the wiki says what resume, ACP and `acia runs` say.
import type { Plan, PlanSet } from '../acm/contracts.js';
import type { LedgerEntry } from '../ledger/entry.js';
import type { RunManifest } from '../ledger/run-vocabulary.js';
import { foldRun } from '../run/reducer.js';
import { roleCosts, type PendingEscalation, type RoleCost, type TaskState, type TaskStatus } from '../run/state.js';

export interface TaskRow {
  id: string;
  capability: string;
  title: string;
  attempts: number;
  verdict: TaskStatus;
  verification: { passed: boolean; command: string; passedCount: number | null; failedCount: number | null } | null;
  summary: string;
  /** For a fix task: the failing test output it was given. */
  failure?: string;
  /** A task of a plan a re-plan abandoned. */
  abandoned: boolean;
}

export interface RunSummary {
  runId: string;
  goal: string;
  contextRef: string | null;
  packetRef: string | null;
  planSet: PlanSet | null;
  /** The plan in force at the end (the chosen one, or the one re-planned to), as proposed. */
  chosen: Plan | null;
  selection: { seq: number; method: string; rationale: string } | null;
  /** Tasks of abandoned plans first, then the plan in force's, in the order they joined it. */
  tasks: Map<string, TaskRow>;
  escalations: PendingEscalation[];
  costUsd: number | null;
  /** Spend per role (absent from runs made before roles were files). */
  roleCosts: RoleCost[];
  terminal: { reason: string; message: string } | null;
  status: string;
  head: { seq: number; hash: string } | null;
  startedAt: string | null;
  /** Set by `acia eval`'s EVAL_GRADED entry, appended after the run. */
  evalGrade?: { instanceId: string; resolved: boolean; error?: string; tamperedFiles?: string[] };
}

export function summarizeRun(runId: string, entries: readonly LedgerEntry[], manifest: RunManifest | null): RunSummary {
  const s = foldRun(entries);
  const tasks = new Map<string, TaskRow>();
  for (const [id, t] of s.retired) tasks.set(id, row(id, t, true));
  for (const [id, t] of s.tasks) tasks.set(id, row(id, t, false));
  const completed = s.completed;
  const status = manifest && manifest.status !== 'running' ? manifest.status : (completed?.reason ?? 'running');
  const cost = completed?.costUsd ?? (s.modelCalls > 0 && s.costKnown ? s.costUsd : null);
  const g = s.evalGrade;
  return {
    runId,
    goal: s.started?.goal.intent ?? manifest?.goal ?? '',
    contextRef: s.contextRef,
    packetRef: s.packetRef,
    planSet: s.planSet,
    chosen: s.plan ? (s.planSet?.plans.find((p) => p.id === s.plan?.id) ?? s.plan) : null,
    selection: s.selection ? { seq: s.selection.seq, method: s.selection.method, rationale: s.selection.rationale } : null,
    tasks,
    escalations: s.escalations,
    costUsd: cost ?? manifest?.costUsd ?? null,
    roleCosts: roleCosts(s),
    terminal: completed ? { reason: completed.reason, message: completed.message } : null,
    status,
    head: s.lastHash === null ? null : { seq: s.lastSeq, hash: s.lastHash },
    startedAt: manifest?.startedAt ?? s.startedAt,
    ...(g ? { evalGrade: { instanceId: g.instanceId, resolved: g.resolved, ...(g.error === undefined ? {} : { error: g.error }), ...(g.tamperedFiles === undefined ? {} : { tamperedFiles: g.tamperedFiles }) } } : {}),
  };
}

function row(id: string, t: TaskState, abandoned: boolean): TaskRow {
  const v = t.lastVerification;
  const failure = t.addedBy === 'fix' ? t.spec.input.failure : undefined;
  return {
    id,
    capability: t.spec.capability,
    title: t.spec.title ?? '',
    attempts: t.attempts,
    verdict: t.status,
    verification: v ? { passed: v.passed, command: v.command, passedCount: v.passedCount, failedCount: v.failedCount } : null,
    summary: t.summary,
    ...(typeof failure === 'string' ? { failure } : {}),
    abandoned,
  };
}
