// The one JSON document a command hook reads on stdin (schemas/hook-input.schema.json): which run, plan,
// task and agent ("which teammate is this?"), the tool call, the worktree, the ledger position, and the
// same facts under the field names Claude Code's hooks read, so its scripts run unchanged.
import { z } from 'zod';
import { HookEvent } from './events.js';

const ToolResult = z.object({
  ok: z.boolean(),
  /** What the agent read as the tool's result (cut in the middle when long). */
  output: z.string(),
});

export const HookInput = z.object({
  /** The ACIA point (`tool.pre`), or the Claude Code event the hook is configured under (`PreToolUse`). */
  hook_event_name: z.string(),
  /** The ACIA point, whatever name the hook is configured under. */
  acia_event: HookEvent,
  /** The hook's name (or `<on>#<n>`). */
  hook_name: z.string(),
  /** The run id (Claude Code's session). */
  session_id: z.string(),
  /** The run's ledger (JSON lines), Claude Code's transcript. */
  transcript_path: z.string(),
  /** Where the hook runs: the task's worktree, or the run's. */
  cwd: z.string(),
  /** Always `default`: ACIA has no permission modes; present for Claude Code scripts. */
  permission_mode: z.literal('default'),
  /** The last ledger entry's sequence number when the hook ran. */
  ledger_seq: z.number().int(),
  run: z.object({ id: z.string(), goal: z.string(), branch: z.string(), base_commit: z.string() }),
  plan: z.object({ id: z.string(), task_count: z.number().int() }).nullable(),
  task: z
    .object({
      id: z.string(),
      /** Its capability: `dev.implement`, `qa.verify`, ... */
      kind: z.string(),
      title: z.string().nullable(),
      /** The task's input from the plan (instructions, files, ...). */
      input: z.unknown(),
      attempt: z.number().int().nullable(),
      branch: z.string().nullable(),
      worktree: z.string().nullable(),
    })
    .nullable(),
  /** The agent at work: its name in the ledger (`dev:t1`), role and attempt. Null outside an agent's session. */
  agent: z.object({ name: z.string(), role: z.enum(['pm', 'dev', 'qa', 'team']), attempt: z.number().int().nullable() }).nullable(),
  /** tool.pre / tool.post: the call (and at tool.post, its result). */
  tool: z.object({ name: z.string(), use_id: z.string(), input: z.unknown(), result: ToolResult.optional() }).nullable(),
  /** task.post and task.merge: the files the task changed, relative to the worktree. */
  files_changed: z.array(z.string()).optional(),
  /** task.post: what the agent delivered (its summary and facts). */
  result: z.record(z.string(), z.unknown()).optional(),
  /** task.merge: where the task's commit goes. */
  merge: z.object({ into: z.string(), commit: z.string().nullable() }).optional(),
  escalation: z.object({ reason: z.string(), message: z.string(), task_id: z.string().nullable(), options: z.array(z.string()) }).optional(),
  /** run.end: how the run ended. */
  outcome: z.object({ reason: z.string(), message: z.string(), head_commit: z.string().nullable(), files_changed: z.array(z.string()) }).optional(),

  // Claude Code's fields for the same facts (with Claude Code's tool names and inputs when configured
  // under a Claude Code event name, ACIA's otherwise).
  tool_name: z.string().optional(),
  tool_input: z.unknown().optional(),
  tool_use_id: z.string().optional(),
  tool_response: z.unknown().optional(),
  task_id: z.string().optional(),
  task_subject: z.string().optional(),
  task_description: z.string().optional(),
  teammate_name: z.string().optional(),
  team_name: z.string().optional(),
  agent_id: z.string().optional(),
  agent_type: z.string().optional(),
  stop_hook_active: z.boolean().optional(),
  last_assistant_message: z.string().optional(),
  message: z.string().optional(),
  title: z.string().optional(),
  notification_type: z.string().optional(),
  reason: z.string().optional(),
});
export type HookInput = z.infer<typeof HookInput>;

/** Any part of a document (`acia hooks test --input`). */
export const PartialHookInput = HookInput.partial();
export type PartialHookInput = z.infer<typeof PartialHookInput>;
