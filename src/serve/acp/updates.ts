// Turns a run's ledger entries, in order, into ACP `session/update` payloads: the plan in force (the
// run state the one reducer folds, so a re-plan replaces it) as an ACP plan whose entries follow the tasks, each tool call as tool_call/tool_call_update (with diffs
// for edits), and every other step as an agent message line labelled by the agent that made it.
// The same mapper serves a live run and `session/load` of a finished one, so both look alike; a load
// also replays what the user said (the goal, their answers, their messages) as user messages, as ACP asks.
// Paths are absolute (ACP's MUST) and name the file in the user's checkout, not in the task's worktree,
// which is gone once the run ends: the change itself is on the run's branch.
import { isAbsolute, relative, resolve } from 'node:path';
import type { PlanEntry, SessionUpdate, ToolCallContent, ToolKind } from '@agentclientprotocol/sdk';
import type { EntryOf, LedgerEntry } from '../../core/ledger/entry.js';
import type { EventDataOf } from '../../core/ledger/events.js';
import { applyEntry } from '../../core/run/reducer.js';
import { emptyRunState, type TaskStatus } from '../../core/run/state.js';
import { planView } from '../../core/run/views.js';
import { editFile, gitDiff, gitStatus, listDir, readFile, runCommand, runTests, search, writeFile } from '../../core/tools/tool-sets.js';
import { describeEntry } from '../../app/describe.js';
import { stripControls } from './text.js';

/** Reads a blob of the run (tool output) as text, or null when it is not there. */
export type BlobText = (ref: string) => string | null;

/** ACP's kind of each built-in tool, keyed by the tools themselves (MCP tools are 'other'). */
const TOOL_KINDS: Record<string, ToolKind> = {
  [readFile.name]: 'read',
  [listDir.name]: 'read',
  [search.name]: 'search',
  [writeFile.name]: 'edit',
  [editFile.name]: 'edit',
  [runCommand.name]: 'execute',
  [runTests.name]: 'execute',
  [gitStatus.name]: 'read',
  [gitDiff.name]: 'read',
};

/** Entry types that are bookkeeping, not news for the person watching. */
const QUIET = new Set(['LLM_CALL', 'TOOL_CALL', 'TOOL_RESULT', 'PLAN_PROPOSED']);

const MAX_TOOL_TEXT = 8_000;

export class AcpUpdateMapper {
  /** The run as the one reducer folds it: the plan view is read off this state, never rebuilt here. */
  private readonly state = emptyRunState();
  private lastPlan = '';
  private readonly toolInputs = new Map<string, { name: string; input: unknown }>();

  /**
   * @param repo the repository's absolute root: where paths point.
   * @param replay whether this is a `session/load`: the user's own messages are sent back too.
   */
  constructor(
    private readonly readBlob: BlobText,
    private readonly repo: string,
    private readonly replay = false,
  ) {}

  /** The updates one ledger entry produces (often none, sometimes several). */
  map(entry: LedgerEntry): SessionUpdate[] {
    applyEntry(this.state, entry);
    const updates: SessionUpdate[] = [];
    const plan = this.planUpdate();
    if (plan !== null) updates.push(plan);
    if (entry.type === 'TOOL_CALL') updates.push(this.toolCall(entry));
    if (entry.type === 'TOOL_RESULT') updates.push(this.toolResult(entry.data));
    if (this.replay && entry.type === 'RUN_STARTED') updates.push(userMessage(entry.data.goal.intent));
    if (this.replay && entry.type === 'HUMAN_RESPONSE') updates.push(userMessage(entry.data.text ?? entry.data.action));
    // A message to the running team, as an ACP client sends it (directing.ts): `[@task] [mode:] text`.
    if (this.replay && entry.type === 'MESSAGE_RECEIVED') updates.push(userMessage(addressedText(entry.data)));
    if (!QUIET.has(entry.type)) updates.push(message(`[${entry.actor}] ${describeEntry(entry)}\n`));
    return updates;
  }

  /** The plan in force with each task's status, when it differs from the last one sent. */
  private planUpdate(): SessionUpdate | null {
    const view = planView(this.state);
    if (view.planId === null) return null;
    // Once the run has stopped (cancelled, waiting for a human, out of budget), nothing is in progress.
    const stopped = this.state.completed !== null;
    const entries: PlanEntry[] = view.tasks.map((t) => {
      // ACP knows pending, in progress and completed: a failed task may yet be retried or fixed.
      const halted = stopped && t.status === 'running';
      const note = t.status === 'failed' || t.status === 'skipped' ? ` (${t.status})` : halted ? ' (stopped)' : '';
      return {
        content: stripControls(`${t.id} ${t.capability}: ${t.title}${note}`),
        priority: t.capability.startsWith('qa.') ? 'medium' : 'high',
        status: halted ? 'pending' : ACP_STATUS[t.status],
      };
    });
    const key = JSON.stringify(entries);
    if (key === this.lastPlan) return null;
    this.lastPlan = key;
    return { sessionUpdate: 'plan', entries };
  }

  private toolCall(entry: EntryOf<'TOOL_CALL'>): SessionUpdate {
    const d = entry.data;
    this.toolInputs.set(d.toolUseId, { name: d.name, input: d.input });
    const path = this.absolute(pathOf(d.input));
    return {
      sessionUpdate: 'tool_call',
      toolCallId: d.toolUseId,
      title: stripControls(`${entry.actor}: ${describeEntry(entry)}`),
      kind: TOOL_KINDS[d.name] ?? 'other',
      status: 'in_progress',
      ...(path ? { locations: [{ path }] } : {}),
      rawInput: d.input,
    };
  }

  private toolResult(d: EventDataOf<'TOOL_RESULT'>): SessionUpdate {
    const call = this.toolInputs.get(d.toolUseId);
    const content: ToolCallContent[] = [];
    const edit = call ? diffOf(call.name, call.input, this.absolute(pathOf(call.input))) : null;
    if (d.ok && edit) content.push({ type: 'diff', ...edit });
    else {
      const text = outputText(this.readBlob(d.outputRef));
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

  /** A tool's path (relative to its worktree, which mirrors the repository) as the checkout's absolute path; none outside it. */
  private absolute(path: string | undefined): string | undefined {
    if (path === undefined) return undefined;
    const full = resolve(this.repo, path);
    const rel = relative(this.repo, full);
    return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? undefined : full;
  }
}

const ACP_STATUS: Record<TaskStatus, PlanEntry['status']> = { pending: 'pending', running: 'in_progress', completed: 'completed', failed: 'pending', skipped: 'completed' };

export function message(text: string): SessionUpdate {
  return { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: stripControls(text) } };
}

/** A message to the team written the way a prompt addresses one (the PM when unaddressed; queue is the default). */
export function addressedText(m: { to: string; mode: string; text: string }): string {
  return `${m.to === 'pm' ? '' : `@${m.to} `}${m.mode === 'queue' ? '' : `${m.mode}: `}${m.text}`;
}

function userMessage(text: string): SessionUpdate {
  return { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: stripControls(text) } };
}

/** A tool result blob as the text the model read (`forModel`), not the JSON envelope it is stored in. */
function outputText(blob: string | null): string | null {
  if (blob === null) return null;
  try {
    const v = JSON.parse(blob) as { forModel?: unknown };
    if (typeof v === 'object' && v !== null && typeof v.forModel === 'string') return v.forModel;
  } catch {
    // Not the envelope: shown as it is.
  }
  return blob;
}

function pathOf(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const p = (input as { path?: unknown }).path;
  return typeof p === 'string' ? p : undefined;
}

/** The change an edit made, as ACP's diff content (the edited span for edit_file, the whole file for write_file). */
function diffOf(name: string, input: unknown, full: string | undefined): { path: string; oldText: string | null; newText: string } | null {
  if (!full || typeof input !== 'object' || input === null) return null;
  const i = input as { content?: unknown; old?: unknown; new?: unknown };
  if (name === writeFile.name && typeof i.content === 'string') return { path: full, oldText: null, newText: clip(i.content) };
  if (name === editFile.name && typeof i.old === 'string' && typeof i.new === 'string') return { path: full, oldText: clip(i.old), newText: clip(i.new) };
  return null;
}

function clip(text: string): string {
  return text.length <= MAX_TOOL_TEXT ? text : `${text.slice(0, MAX_TOOL_TEXT)}\n[${text.length - MAX_TOOL_TEXT} more characters]`;
}
