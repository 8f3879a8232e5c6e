// The one place `acia ui` reads run state from ledger entries, for the server (the runs list) and the
// page (the run view) alike. It folds with the one reducer table in core (core/run), as the executor,
// resume, `acia show` and the wiki do, so the web view cannot disagree with them. Browser-safe: the
// reducer and state modules import types only, and nothing here pulls in the parser's schemas.
import type { Plan } from '../core/acm/contracts.js';
import type { EntryOf, LedgerEntry } from '../core/ledger/entry.js';
import { applyEntry } from '../core/run/reducer.js';
import { emptyRunState, type PendingEscalation, type RunState } from '../core/run/state.js';

export type { EntryOf, LedgerEntry, Plan, PendingEscalation, RunState };

/** What the runs list shows of one run. */
export interface RunRow {
  runId: string;
  goal: string;
  /** The terminal reason, `running` while no RUN_COMPLETED stands, or `empty` before the first entry. */
  status: string;
  outcome: string | null;
  costUsd: number | null;
  tokens: number;
  startedAt: string | null;
  updatedAt: string | null;
  durationMs: number;
  branch: string | null;
  waiting: boolean;
  tasks: { total: number; completed: number; failed: number; running: number };
  entries: number;
}

/** A run's state, applied entry by entry: a page or the server never folds a run twice. */
export class RunFold {
  readonly state: RunState = emptyRunState();
  firstTs: string | null = null;
  lastTs: string | null = null;
  count = 0;

  apply(entries: Iterable<LedgerEntry>): void {
    for (const e of entries) {
      if (e.seq !== this.count) continue; // a duplicate after a reconnect, never applied twice
      applyEntry(this.state, e);
      this.firstTs ??= e.ts;
      this.lastTs = e.ts;
      this.count++;
    }
  }

  row(runId: string): RunRow {
    const s = this.state;
    const tasks = [...s.tasks.values()];
    const elapsed = this.firstTs && this.lastTs ? Date.parse(this.lastTs) - Date.parse(this.firstTs) : 0;
    return {
      runId,
      goal: s.started?.goal.intent ?? '',
      status: runStatus(s, this.count),
      outcome: s.completed?.message ?? null,
      costUsd: s.costKnown ? s.costUsd : null,
      tokens: s.tokens,
      startedAt: this.firstTs,
      updatedAt: this.lastTs,
      durationMs: s.completed?.durationMs ?? Math.max(0, elapsed),
      branch: s.started?.runBranch ?? null,
      waiting: openEscalationOf(s) !== null,
      tasks: {
        total: tasks.length,
        completed: tasks.filter((t) => t.status === 'completed').length,
        failed: tasks.filter((t) => t.status === 'failed').length,
        running: tasks.filter((t) => t.status === 'running').length,
      },
      entries: this.count,
    };
  }
}

export function runStatus(s: RunState, entries: number): string {
  if (entries === 0) return 'empty';
  return s.completed?.reason ?? 'running';
}

/** The escalation waiting for an answer, if any (the same question `acia resume --answer` answers). */
export function openEscalationOf(s: RunState): PendingEscalation | null {
  const last = s.escalations.at(-1);
  return last && last.answer === null ? last : null;
}

/** The task an entry belongs to: its data's taskId, else the task in its actor (`dev:t1`), else null. */
export function taskOf(e: LedgerEntry): string | null {
  if (e.type === 'TASK_ADDED') return e.data.task.id;
  const d: object = e.data;
  if ('taskId' in d && typeof d.taskId === 'string') return d.taskId;
  const m = /^(?:dev|qa):(.+)$/.exec(e.actor);
  return m ? m[1]! : null;
}

/** One attempt of a task on the timeline. */
export interface Attempt {
  attempt: number;
  start: string;
  end: string | null;
  outcome: 'running' | 'completed' | 'failed' | 'interrupted';
}

/** What a task did, gathered from its entries: the per-task panel and the timeline read this. */
export interface TaskActivity {
  taskId: string;
  seqs: number[];
  attempts: Attempt[];
  costUsd: number;
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number };
  modelCalls: number;
  toolCalls: number;
  testRuns: number[];
  checkpoints: number[];
}

/** Per-task activity, kept up to date entry by entry (a 5,000-entry run is gathered once, then extended). */
export class ActivityIndex {
  readonly tasks = new Map<string, TaskActivity>();
  /** Tasks in the order they first started: the timeline's lanes. */
  readonly lanes: string[] = [];

  apply(e: LedgerEntry): void {
    const id = taskOf(e);
    if (id === null) {
      // A new session ends every attempt the last one left open: it was interrupted.
      if (e.type === 'RUN_RESUMED' || e.type === 'RUN_COMPLETED') for (const t of this.tasks.values()) closeOpen(t, e.ts, 'interrupted');
      return;
    }
    const t = this.get(id);
    t.seqs.push(e.seq);
    switch (e.type) {
      case 'TASK_STARTED': {
        closeOpen(t, e.ts, 'interrupted');
        if (!this.lanes.includes(id)) this.lanes.push(id);
        t.attempts.push({ attempt: e.data.attempt, start: e.ts, end: null, outcome: 'running' });
        break;
      }
      case 'TASK_COMPLETED':
        closeOpen(t, e.ts, 'completed');
        break;
      case 'TASK_FAILED':
        closeOpen(t, e.ts, 'failed');
        break;
      case 'LLM_CALL': {
        const d = e.data;
        t.modelCalls++;
        t.costUsd += d.costUsd ?? 0;
        t.tokens.input += d.usage.inputTokens;
        t.tokens.output += d.usage.outputTokens;
        t.tokens.cacheRead += d.usage.cacheReadTokens;
        t.tokens.cacheWrite += d.usage.cacheWriteTokens;
        break;
      }
      case 'TOOL_CALL':
        t.toolCalls++;
        break;
      case 'VERIFICATION':
        if (e.data.source !== 'check') t.testRuns.push(e.seq);
        break;
      case 'CHECKPOINT':
        t.checkpoints.push(e.seq);
        break;
      default:
        break;
    }
  }

  private get(id: string): TaskActivity {
    let t = this.tasks.get(id);
    if (!t) {
      t = { taskId: id, seqs: [], attempts: [], costUsd: 0, tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, modelCalls: 0, toolCalls: 0, testRuns: [], checkpoints: [] };
      this.tasks.set(id, t);
    }
    return t;
  }
}

function closeOpen(t: TaskActivity, ts: string, outcome: Attempt['outcome']): void {
  const last = t.attempts.at(-1);
  if (last && last.end === null) {
    last.end = ts;
    last.outcome = outcome;
  }
}

/** The run's budget against its limits, from the recorded settings and what was spent. */
export interface BudgetLine {
  what: 'cost' | 'tokens' | 'minutes';
  spent: number;
  max: number | null;
}

export function budgetOf(s: RunState, elapsedMs: number): BudgetLine[] {
  const b = s.started?.settings.budget ?? {};
  return [
    { what: 'cost', spent: s.costUsd, max: b.maxCostUsd ?? null },
    { what: 'tokens', spent: s.tokens, max: b.maxTokens ?? null },
    { what: 'minutes', spent: elapsedMs / 60_000, max: b.maxMinutes ?? null },
  ];
}

/** The plan the run executes (with the tasks and edges added on the way), and the alternatives it did not. */
export function plansOf(s: RunState): { executed: Plan | null; alternatives: Plan[] } {
  const executedId = s.plan?.id ?? null;
  return { executed: s.plan, alternatives: (s.planSet?.plans ?? []).filter((p) => p.id !== executedId) };
}
