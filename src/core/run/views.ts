// What front ends show of a run's plan, read off the folded state: the plan in force and its tasks with
// their status. ACP's plan view, the live progress view, MCP's status and the web view all use it, so
// an editor, a terminal and a browser show the same plan after a re-plan.
import type { TaskSpec } from '../acm/contracts.js';
import type { TerminalReason } from '../ledger/run-vocabulary.js';
import type { RunState, TaskStatus } from './state.js';

export interface TaskView {
  id: string;
  capability: string;
  /** The spec's title, else the first line of its instructions, else its id. */
  title: string;
  status: TaskStatus;
  attempts: number;
  /** What the last ending said (completion summary, failure, skip reason); empty while none. */
  summary: string;
}

export interface PlanView {
  /** The plan in force (after re-plans), null until one is chosen. */
  planId: string | null;
  /** Its tasks, including those the fix loop and merges added, in the order they joined it. */
  tasks: TaskView[];
  /** How the run ended, null while it has not (or a resume reopened it). */
  outcome: TerminalReason | null;
}

export function planView(state: RunState): PlanView {
  const tasks = [...state.tasks.values()].map((t) => ({ id: t.spec.id, capability: t.spec.capability, title: titleOf(t.spec), status: t.status, attempts: t.attempts, summary: t.summary }));
  return { planId: state.plan?.id ?? null, tasks, outcome: state.completed?.reason ?? null };
}

export function titleOf(spec: TaskSpec): string {
  if (spec.title !== undefined) return spec.title;
  const what = spec.input.instructions;
  return typeof what === 'string' ? (what.split('\n')[0] ?? spec.id) : spec.id;
}
