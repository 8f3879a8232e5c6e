// One moment a hook may run at: the facts the team gathers there, which hooks match them (task kind, tool
// name, paths), and the stdin document each matching hook gets (in Claude Code's shape when asked).
import { posix } from 'node:path';
import picomatch from 'picomatch';
import type { HookEvent } from './events.js';
import type { ResolvedHook } from './config.js';
import type { HookInput, PartialHookInput } from './input.js';
import { claudeToolInput, claudeToolName, claudeToolResponse } from './claude-code.js';

export interface HookOccurrence {
  event: HookEvent;
  /** Where the hooks run: the task's worktree, or the run's. */
  cwd: string;
  ledgerPath: string;
  ledgerSeq: number;
  run: { id: string; goal: string; branch: string; baseCommit: string };
  plan: { id: string; taskCount: number } | null;
  task: { id: string; kind: string; title: string | null; input: unknown; attempt: number | null; branch: string | null; worktree: string | null } | null;
  agent: { name: string; role: 'pm' | 'dev' | 'qa' | 'team'; attempt: number | null } | null;
  /** `path`: the call's path as the worktree resolves it (links, `..`), when the team could resolve it. */
  tool?: { name: string; useId: string; input: unknown; path?: string; result?: { ok: boolean; output: string } };
  filesChanged?: string[];
  /** task.post: what the agent delivered, and whether a hook already sent it back this session. */
  result?: Record<string, unknown>;
  repeat?: boolean;
  merge?: { into: string; commit: string | null };
  escalation?: { reason: string; message: string; taskId: string | null; options: string[] };
  outcome?: { reason: string; message: string; headCommit: string | null; filesChanged: string[] };
}

/** The hooks that apply to an occurrence, in configuration order. */
export function matchingHooks(hooks: readonly ResolvedHook[], o: HookOccurrence): ResolvedHook[] {
  return hooks.filter((h) => h.event === o.event && matches(h, o));
}

function matches(h: ResolvedHook, o: HookOccurrence): boolean {
  if (h.kind.length > 0 && (o.task === null || !anyGlob(h.kind, [o.task.kind]))) return false;
  if (h.tool.length > 0 && (o.tool === undefined || !anyGlob(h.tool, [o.tool.name, claudeToolName(o.tool.name)]))) return false;
  if (h.paths.length > 0 && !pathsOf(o).some((p) => anyGlob(h.paths, [p]))) return false;
  return true;
}

/**
 * The paths an occurrence concerns: the tool call's `path`, or the files the task changed. A call's path is
 * matched as written (normalised) and as it resolves, so `src/../infra/x`, a link into `infra/` or an
 * absolute path meet an `infra/**` guard as `infra/x` does.
 */
export function pathsOf(o: HookOccurrence): string[] {
  if (o.tool !== undefined) {
    const input = o.tool.input as { path?: unknown } | null;
    const written = typeof input?.path === 'string' && input.path !== '' ? [posix.normalize(input.path).replace(/^\.\//, '')] : [];
    return [...new Set([...written, ...(o.tool.path === undefined ? [] : [o.tool.path])])];
  }
  return o.filesChanged ?? [];
}

function anyGlob(globs: readonly string[], values: readonly string[]): boolean {
  // A glob with no `/` also matches a base name at any depth (`*.lock`), as protectedPaths do.
  return globs.some((g) => {
    const m = picomatch(g, { dot: true, ...(g.includes('/') ? {} : { basename: true }) });
    return values.some((v) => m(v));
  });
}

/** The stdin document for `hook` at `o`. */
export function hookInput(hook: ResolvedHook, o: HookOccurrence): HookInput {
  const cc = hook.claudeCode !== null;
  const instructions = (o.task?.input as { instructions?: unknown } | null | undefined)?.instructions;
  const doc: HookInput = {
    hook_event_name: hook.claudeCode ?? o.event,
    acia_event: o.event,
    hook_name: hook.id,
    session_id: o.run.id,
    transcript_path: o.ledgerPath,
    cwd: o.cwd,
    permission_mode: 'default',
    ledger_seq: o.ledgerSeq,
    run: { id: o.run.id, goal: o.run.goal, branch: o.run.branch, base_commit: o.run.baseCommit },
    plan: o.plan === null ? null : { id: o.plan.id, task_count: o.plan.taskCount },
    task: o.task,
    agent: o.agent,
    tool: o.tool === undefined ? null : { name: o.tool.name, use_id: o.tool.useId, input: o.tool.input, ...(o.tool.result ? { result: o.tool.result } : {}) },
    ...(o.filesChanged ? { files_changed: o.filesChanged } : {}),
    ...(o.result ? { result: o.result } : {}),
    ...(o.merge ? { merge: o.merge } : {}),
    ...(o.escalation ? { escalation: { reason: o.escalation.reason, message: o.escalation.message, task_id: o.escalation.taskId, options: o.escalation.options } } : {}),
    ...(o.outcome ? { outcome: { reason: o.outcome.reason, message: o.outcome.message, head_commit: o.outcome.headCommit, files_changed: o.outcome.filesChanged } } : {}),
    team_name: o.run.id,
  };
  if (o.tool !== undefined) {
    doc.tool_name = cc ? claudeToolName(o.tool.name) : o.tool.name;
    doc.tool_input = cc ? claudeToolInput(o.tool.name, o.tool.input, o.cwd) : o.tool.input;
    doc.tool_use_id = o.tool.useId;
    if (o.tool.result) doc.tool_response = cc ? claudeToolResponse(o.tool.name, o.tool.input, o.tool.result, o.cwd) : o.tool.result;
  }
  if (o.task !== null) {
    doc.task_id = o.task.id;
    doc.task_subject = o.task.title ?? (typeof instructions === 'string' ? (instructions.split('\n')[0] ?? '') : o.task.id);
    if (typeof instructions === 'string') doc.task_description = instructions;
  }
  if (o.agent !== null) {
    doc.teammate_name = o.agent.name;
    doc.agent_id = o.agent.name;
    doc.agent_type = o.agent.role;
  }
  if (o.event === 'task.post') {
    doc.stop_hook_active = o.repeat === true;
    const summary = o.result?.summary;
    if (typeof summary === 'string') doc.last_assistant_message = summary;
  }
  if (o.escalation) {
    doc.message = o.escalation.message;
    doc.title = `ACIA run ${o.run.id} needs you`;
    doc.notification_type = 'escalation';
  }
  if (o.outcome) doc.reason = o.outcome.reason;
  return doc;
}

/**
 * The occurrence a stdin document describes (`acia hooks test`): a document as ACIA writes it, or any part
 * of one; what it leaves out is empty. The hooks run in `cwd`, whatever the document says.
 */
export function occurrenceOf(event: HookEvent, doc: PartialHookInput, cwd: string): HookOccurrence {
  return {
    event,
    cwd,
    ledgerPath: doc.transcript_path ?? '',
    ledgerSeq: doc.ledger_seq ?? 0,
    run: doc.run ? { id: doc.run.id, goal: doc.run.goal, branch: doc.run.branch, baseCommit: doc.run.base_commit } : { id: doc.session_id ?? 'test', goal: '', branch: '', baseCommit: '' },
    plan: doc.plan ? { id: doc.plan.id, taskCount: doc.plan.task_count } : null,
    task: doc.task ?? null,
    agent: doc.agent ?? null,
    ...(doc.tool ? { tool: { name: doc.tool.name, useId: doc.tool.use_id, input: doc.tool.input, ...(doc.tool.result ? { result: doc.tool.result } : {}) } } : {}),
    ...(doc.files_changed ? { filesChanged: doc.files_changed } : {}),
    ...(doc.result ? { result: doc.result } : {}),
    ...(doc.stop_hook_active === undefined ? {} : { repeat: doc.stop_hook_active }),
    ...(doc.merge ? { merge: doc.merge } : {}),
    ...(doc.escalation ? { escalation: { reason: doc.escalation.reason, message: doc.escalation.message, taskId: doc.escalation.task_id, options: doc.escalation.options } } : {}),
    ...(doc.outcome ? { outcome: { reason: doc.outcome.reason, message: doc.outcome.message, headCommit: doc.outcome.head_commit, filesChanged: doc.outcome.files_changed } } : {}),
  };
}
