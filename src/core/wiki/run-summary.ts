// Folds a run's ledger into what the wiki shows: goal, plans, tasks and verdicts, escalations, cost, end.
import { PlanSet, type LedgerEntry, type Plan } from '../acm/contracts.js';
import { fold } from '../ledger/line-reader.js';
import type { EventDataOf, RunManifest } from '../ledger/events.js';
import { executedPlan } from '../ledger/bundle-artifacts.js';

export interface TaskRow {
  id: string;
  capability: string;
  title: string;
  attempts: number;
  verdict: 'pending' | 'running' | 'completed' | 'failed' | 'skipped';
  verification: { passed: boolean; command: string; passedCount: number | null; failedCount: number | null } | null;
  summary: string;
  /** For a fix task: the failing test output it was given. */
  failure?: string;
}

export interface EscalationRow {
  seq: number;
  data: EventDataOf<'ESCALATION_REQUESTED'>;
  answer: { seq: number; action: string; text: string | undefined } | null;
}

export interface RunSummary {
  runId: string;
  goal: string;
  contextRef: string | null;
  packetRef: string | null;
  planSet: PlanSet | null;
  chosen: Plan | null;
  selection: { seq: number; method: string; rationale: string } | null;
  tasks: Map<string, TaskRow>;
  escalations: EscalationRow[];
  costUsd: number | null;
  terminal: { reason: string; message: string } | null;
  status: string;
  head: { seq: number; hash: string } | null;
  startedAt: string | null;
  /** Set by `acia eval`'s EVAL_GRADED entry, appended after the run. */
  evalGrade?: { instanceId: string; resolved: boolean; error?: string; tamperedFiles?: string[] };
}

export function summarizeRun(runId: string, entries: readonly LedgerEntry[], manifest: RunManifest | null): RunSummary {
  const init: RunSummary = {
    runId, goal: manifest?.goal ?? '', contextRef: null, packetRef: null, planSet: null, chosen: null, selection: null,
    tasks: new Map(), escalations: [], costUsd: null, terminal: null, status: 'running', head: null, startedAt: manifest?.startedAt ?? null,
  };
  const s = fold(entries, step, init);
  // The plan actually executed (after re-plans), read the way the bundle reads it.
  const executed = executedPlan(entries);
  if (executed.chosen.plan) s.chosen = s.planSet?.plans.find((p) => p.id === executed.chosen.planId) ?? executed.chosen.plan;
  for (const t of s.chosen?.tasks ?? []) {
    if (!s.tasks.has(t.id)) s.tasks.set(t.id, row(t.id, t.capability, t.title ?? ''));
    else {
      const r = s.tasks.get(t.id)!;
      if (!r.title) r.title = t.title ?? '';
    }
  }
  if (manifest && manifest.status !== 'running') s.status = manifest.status;
  if (manifest?.costUsd !== undefined && manifest.costUsd !== null && s.costUsd === null) s.costUsd = manifest.costUsd;
  return s;
}

function row(id: string, capability: string, title: string): TaskRow {
  return { id, capability, title, attempts: 0, verdict: 'pending', verification: null, summary: '' };
}

function step(s: RunSummary, e: LedgerEntry): RunSummary {
  s.head = { seq: e.seq, hash: e.hash };
  s.startedAt ??= e.ts;
  const task = (id: string, capability = ''): TaskRow => {
    let r = s.tasks.get(id);
    if (!r) s.tasks.set(id, (r = row(id, capability, '')));
    if (capability && !r.capability) r.capability = capability;
    return r;
  };
  switch (e.type) {
    case 'RUN_STARTED':
      s.goal = (e.data as EventDataOf<'RUN_STARTED'>).goal.intent;
      break;
    case 'CONTEXT_BUILT': {
      const d = e.data as EventDataOf<'CONTEXT_BUILT'>;
      s.contextRef = d.contextRef;
      s.packetRef = d.packetRef;
      break;
    }
    case 'PLAN_PROPOSED': {
      const parsed = PlanSet.safeParse((e.data as { planSet?: unknown }).planSet);
      if (parsed.success && (e.data as { valid?: boolean }).valid !== false) s.planSet = parsed.data;
      break;
    }
    case 'PLAN_SELECTED': {
      const d = e.data as EventDataOf<'PLAN_SELECTED'>;
      s.selection = { seq: e.seq, method: d.method, rationale: d.rationale };
      break;
    }
    case 'TASK_ADDED': {
      const d = e.data as EventDataOf<'TASK_ADDED'>;
      const r = task(d.task.id, d.task.capability);
      r.title ||= d.task.title ?? '';
      const failure = (d.task.input as { failure?: unknown }).failure;
      if (d.reason === 'fix' && typeof failure === 'string') r.failure = failure;
      break;
    }
    case 'TASK_STARTED': {
      const d = e.data as EventDataOf<'TASK_STARTED'>;
      const r = task(d.taskId, d.capability);
      r.attempts = Math.max(r.attempts, d.attempt);
      r.verdict = 'running';
      break;
    }
    case 'TASK_COMPLETED': {
      const d = e.data as EventDataOf<'TASK_COMPLETED'>;
      Object.assign(task(d.taskId), { verdict: 'completed', summary: d.summary });
      break;
    }
    case 'TASK_FAILED': {
      const d = e.data as EventDataOf<'TASK_FAILED'>;
      Object.assign(task(d.taskId), { verdict: 'failed', summary: `${d.errorKind}: ${d.message}` });
      break;
    }
    case 'TASK_SKIPPED': {
      const d = e.data as EventDataOf<'TASK_SKIPPED'>;
      Object.assign(task(d.taskId), { verdict: 'skipped', summary: d.cause === 'human' ? 'skipped by a human' : d.reason });
      break;
    }
    case 'VERIFICATION': {
      const d = e.data as EventDataOf<'VERIFICATION'>;
      task(d.taskId).verification = { passed: d.passed, command: d.command, passedCount: d.passedCount, failedCount: d.failedCount };
      break;
    }
    case 'LLM_CALL': {
      const cost = (e.data as EventDataOf<'LLM_CALL'>).costUsd;
      if (cost !== null) s.costUsd = (s.costUsd ?? 0) + cost;
      break;
    }
    case 'ESCALATION_REQUESTED':
      s.escalations.push({ seq: e.seq, data: e.data as EventDataOf<'ESCALATION_REQUESTED'>, answer: null });
      break;
    case 'HUMAN_RESPONSE': {
      const d = e.data as EventDataOf<'HUMAN_RESPONSE'>;
      const esc = s.escalations.find((x) => x.seq === d.escalationSeq);
      if (esc) esc.answer = { seq: e.seq, action: d.action, text: d.text };
      // A skip takes effect with the answer (the TASK_SKIPPED entry may come later, or never in older runs).
      if (esc && d.action === 'skip' && esc.data.taskId !== undefined) Object.assign(task(esc.data.taskId), { verdict: 'skipped', summary: 'skipped by a human' });
      break;
    }
    case 'RUN_RESUMED':
      s.terminal = null;
      s.status = 'running';
      break;
    case 'RUN_COMPLETED': {
      const d = e.data as EventDataOf<'RUN_COMPLETED'>;
      s.terminal = { reason: d.reason, message: d.message };
      s.status = d.reason;
      if (d.costUsd !== null) s.costUsd = d.costUsd;
      break;
    }
    case 'EVAL_GRADED': {
      const d = e.data as EventDataOf<'EVAL_GRADED'>;
      s.evalGrade = { instanceId: d.instanceId, resolved: d.resolved, ...(d.error === undefined ? {} : { error: d.error }), ...(d.tamperedFiles === undefined ? {} : { tamperedFiles: d.tamperedFiles }) };
      break;
    }
    default:
      break;
  }
  return s;
}
