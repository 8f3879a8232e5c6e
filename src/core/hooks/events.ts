// The lifecycle points a user hook can be attached to, what a denial at each one does, and how Claude
// Code's hook events map onto them. One vocabulary with the policy engine: `plan.admit`, `task.pre` and
// `task.post` are ACM's policy points, the rest are points ACIA adds for hooks.
import { z } from 'zod';

export const HOOK_EVENTS = ['plan.admit', 'task.created', 'task.pre', 'tool.pre', 'tool.post', 'task.post', 'task.merge', 'escalation', 'run.end'] as const;
export const HookEvent = z.enum(HOOK_EVENTS);
export type HookEvent = z.infer<typeof HookEvent>;

/** What a hook's "deny" does at a point: the contract `acia hooks list` and the README state. */
export const DENY_EFFECT: Record<HookEvent, string> = {
  'plan.admit': 'the plan is not admitted (as a policy denial)',
  'task.created': 'the task does not run: a policy denial, routed by the plan or escalated',
  'task.pre': 'the attempt does not start: a policy denial, routed by the plan or escalated',
  'tool.pre': 'the tool call is blocked; the reason goes back to the agent as the tool result',
  'tool.post': 'the reason is added to the tool result the agent reads',
  'task.post': 'the reason goes back to the agent, which keeps working (a quality gate)',
  'task.merge': 'the change is undone and not merged: a policy denial, routed by the plan or escalated',
  escalation: 'nothing (a notification); a failure is recorded and reported',
  'run.end': 'nothing (a notification); a failure is recorded and reported',
};

/** Points where nothing is left to stop: a hook there reports, it does not gate. */
export const NOTIFY_EVENTS: ReadonlySet<HookEvent> = new Set(['escalation', 'run.end']);

/** Which matchers apply at a point: a matcher a point cannot answer is a configuration error. */
export const MATCHERS_OF: Record<HookEvent, readonly ('kind' | 'tool' | 'paths')[]> = {
  'plan.admit': [],
  'task.created': ['kind'],
  'task.pre': ['kind'],
  'tool.pre': ['kind', 'tool', 'paths'],
  'tool.post': ['kind', 'tool', 'paths'],
  // The gate runs while the agent's changes are still uncommitted: the hook reads the worktree itself.
  'task.post': ['kind'],
  'task.merge': ['kind', 'paths'],
  escalation: ['kind'],
  'run.end': [],
};

/**
 * Claude Code's events and the ACIA point each maps to. Configured under one of these names, a hook gets
 * its input in Claude Code's shape (event name, tool names and tool inputs as Claude Code has them), so a
 * script written for Claude Code runs unchanged.
 */
export const CLAUDE_CODE_EVENTS = {
  PreToolUse: 'tool.pre',
  PostToolUse: 'tool.post',
  Stop: 'task.post',
  SubagentStop: 'task.post',
  TaskCompleted: 'task.post',
  TaskCreated: 'task.created',
  SubagentStart: 'task.pre',
  Notification: 'escalation',
  SessionEnd: 'run.end',
} as const satisfies Record<string, HookEvent>;
export type ClaudeCodeEvent = keyof typeof CLAUDE_CODE_EVENTS;
export const ClaudeCodeEvent = z.enum(Object.keys(CLAUDE_CODE_EVENTS) as [ClaudeCodeEvent, ...ClaudeCodeEvent[]]);

export function isClaudeCodeEvent(name: string): name is ClaudeCodeEvent {
  return Object.hasOwn(CLAUDE_CODE_EVENTS, name);
}
