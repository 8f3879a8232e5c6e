// Turns a run's ledger entries, in order, into ACP `session/update` payloads: the chosen plan as an
// ACP plan whose entries follow the tasks, each tool call as tool_call/tool_call_update (with diffs
// for edits), and every other step as an agent message line labelled by the agent that made it.
// The same mapper serves a live run and `session/load` of a finished one, so both look alike.
import { join } from 'node:path';
import type { PlanEntry, SessionUpdate, ToolCallContent, ToolKind } from '@agentclientprotocol/sdk';
import type { LedgerEntry, PlanSet, TaskSpec } from '../../core/acm/contracts.js';
import type { EventDataOf } from '../../core/ledger/events.js';
import { describeEntry } from '../../app/describe.js';
import { stripControls } from './text.js';

/** Reads a blob of the run (tool output) as text, or null when it is not there. */
export type BlobText = (ref: string) => string | null;

const TOOL_KINDS: Record<string, ToolKind> = {
  read_file: 'read',
  list_dir: 'read',
  search: 'search',
  write_file: 'edit',
  edit_file: 'edit',
  run_command: 'execute',
  run_tests: 'execute',
  git_status: 'read',
  git_diff: 'read',
};

/** Entry types that are bookkeeping, not news for the person watching. */
const QUIET = new Set(['LLM_CALL', 'TOOL_CALL', 'TOOL_RESULT', 'PLAN_PROPOSED']);

const MAX_TOOL_TEXT = 8_000;

export class AcpUpdateMapper {
  private planSet: PlanSet | null = null;
  private planTasks: TaskSpec[] = [];
  private readonly status = new Map<string, PlanEntry['status']>();
  private readonly outcome = new Map<string, string>();
  private readonly worktrees = new Map<string, string>();
  private readonly toolInputs = new Map<string, { name: string; input: unknown; taskId: string | undefined }>();

  constructor(private readonly readBlob: BlobText) {}

  /** The updates one ledger entry produces (often none, sometimes several). */
  map(entry: LedgerEntry): SessionUpdate[] {
    const updates: SessionUpdate[] = [];
    switch (entry.type) {
      case 'PLAN_PROPOSED': {
        const d = entry.data as EventDataOf<'PLAN_PROPOSED'>;
        if (d.valid && d.planSet) this.planSet = d.planSet;
        break;
      }
      case 'PLAN_SELECTED': {
        const d = entry.data as EventDataOf<'PLAN_SELECTED'>;
        const plan = this.planSet?.plans.find((p) => p.id === d.planId);
        if (plan) {
          // A re-plan replaces the task list; statuses of tasks that already ran are kept.
          this.planTasks = [...plan.tasks];
          updates.push(this.planUpdate());
        }
        break;
      }
      case 'TASK_ADDED': {
        const d = entry.data as EventDataOf<'TASK_ADDED'>;
        if (!this.planTasks.some((t) => t.id === d.task.id)) this.planTasks.push(d.task);
        updates.push(this.planUpdate());
        break;
      }
      case 'TASK_STARTED': {
        const d = entry.data as EventDataOf<'TASK_STARTED'>;
        if (d.worktree) this.worktrees.set(d.taskId, d.worktree);
        updates.push(...this.setStatus(d.taskId, 'in_progress'));
        break;
      }
      case 'TASK_COMPLETED':
        updates.push(...this.setStatus((entry.data as EventDataOf<'TASK_COMPLETED'>).taskId, 'completed'));
        break;
      case 'TASK_FAILED': {
        const d = entry.data as EventDataOf<'TASK_FAILED'>;
        this.outcome.set(d.taskId, 'failed');
        updates.push(...this.setStatus(d.taskId, 'pending'));
        break;
      }
      case 'TASK_SKIPPED': {
        const d = entry.data as EventDataOf<'TASK_SKIPPED'>;
        this.outcome.set(d.taskId, 'skipped');
        updates.push(...this.setStatus(d.taskId, 'completed'));
        break;
      }
      case 'TOOL_CALL':
        updates.push(this.toolCall(entry));
        break;
      case 'TOOL_RESULT':
        updates.push(this.toolResult(entry.data as EventDataOf<'TOOL_RESULT'>));
        break;
      default:
        break;
    }
    if (!QUIET.has(entry.type)) updates.push(message(`[${entry.actor}] ${describeEntry(entry)}\n`));
    return updates;
  }

  private setStatus(taskId: string, status: PlanEntry['status']): SessionUpdate[] {
    this.status.set(taskId, status);
    return this.planTasks.some((t) => t.id === taskId) ? [this.planUpdate()] : [];
  }

  private planUpdate(): SessionUpdate {
    const entries: PlanEntry[] = this.planTasks.map((t) => {
      const what = (t.input as { instructions?: unknown }).instructions;
      const title = t.title ?? (typeof what === 'string' ? what.split('\n')[0] ?? t.id : t.id);
      const outcome = this.outcome.get(t.id);
      return {
        content: stripControls(`${t.id} ${t.capability}: ${title}${outcome ? ` (${outcome})` : ''}`),
        priority: t.capability.startsWith('qa.') ? 'medium' : 'high',
        status: this.status.get(t.id) ?? 'pending',
      };
    });
    return { sessionUpdate: 'plan', entries };
  }

  private toolCall(entry: LedgerEntry): SessionUpdate {
    const d = entry.data as EventDataOf<'TOOL_CALL'>;
    this.toolInputs.set(d.toolUseId, { name: d.name, input: d.input, taskId: d.taskId });
    const path = pathOf(d.input);
    const root = d.taskId ? this.worktrees.get(d.taskId) : undefined;
    return {
      sessionUpdate: 'tool_call',
      toolCallId: d.toolUseId,
      title: stripControls(`${entry.actor}: ${describeEntry(entry)}`),
      kind: TOOL_KINDS[d.name] ?? 'other',
      status: 'in_progress',
      ...(path && root ? { locations: [{ path: join(root, path) }] } : {}),
      rawInput: d.input,
    };
  }

  private toolResult(d: EventDataOf<'TOOL_RESULT'>): SessionUpdate {
    const call = this.toolInputs.get(d.toolUseId);
    const content: ToolCallContent[] = [];
    const edit = call ? diffOf(call.name, call.input, call.taskId ? this.worktrees.get(call.taskId) : undefined) : null;
    if (d.ok && edit) content.push({ type: 'diff', ...edit });
    else {
      const text = this.readBlob(d.outputRef);
      if (text !== null) content.push({ type: 'content', content: { type: 'text', text: clip(stripControls(text)) } });
    }
    return {
      sessionUpdate: 'tool_call_update',
      toolCallId: d.toolUseId,
      status: d.ok ? 'completed' : 'failed',
      content,
      ...(d.data ? { rawOutput: d.data } : {}),
    };
  }
}

export function message(text: string): SessionUpdate {
  return { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: stripControls(text) } };
}

function pathOf(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const p = (input as { path?: unknown }).path;
  return typeof p === 'string' ? p : undefined;
}

/** The change an edit made, as ACP's diff content (the edited span for edit_file, the whole file for write_file). */
function diffOf(name: string, input: unknown, root: string | undefined): { path: string; oldText: string | null; newText: string } | null {
  const path = pathOf(input);
  if (!path || typeof input !== 'object' || input === null) return null;
  const full = root ? join(root, path) : path;
  const i = input as { content?: unknown; old?: unknown; new?: unknown };
  if (name === 'write_file' && typeof i.content === 'string') return { path: full, oldText: null, newText: clip(i.content) };
  if (name === 'edit_file' && typeof i.old === 'string' && typeof i.new === 'string') return { path: full, oldText: clip(i.old), newText: clip(i.new) };
  return null;
}

function clip(text: string): string {
  return text.length <= MAX_TOOL_TEXT ? text : `${text.slice(0, MAX_TOOL_TEXT)}\n[${text.length - MAX_TOOL_TEXT} more characters]`;
}
