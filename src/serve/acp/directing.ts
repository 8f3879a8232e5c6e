// Directing a running team from an ACP client (docs/acp.md): a prompt sent while the session's run is
// going is a message to the team (`acia say`'s inbox and checks, its author marked as ACP), addressed to
// a task with a leading `@<task>` and given a mode with `steer:` or `interrupt:`; and the plan approval
// gate asked as a permission request that carries the plans, with approve, one switch per other plan,
// edit and reject (both answered by the next prompt), and abort.
import { randomUUID } from 'node:crypto';
import type { AgentContext, PermissionOption, ToolCallUpdate } from '@agentclientprotocol/sdk';
import { sayToRun, type SayResult } from '../../app/say-run.js';
import { whoAmI } from '../../app/who-am-i.js';
import type { MessageMode } from '../../core/contain/message-request.js';
import type { EscalationQuestion, HumanAnswer } from '../../team/deps.js';
import { message } from './updates.js';
import { stripControls } from './text.js';

/** A prompt read as a message: `[@<task>] [queue:|steer:|interrupt:] text`; no address is the PM. */
export interface AddressedMessage {
  task?: string;
  mode: MessageMode;
  text: string;
}

export function parseAddressedMessage(prompt: string): AddressedMessage {
  let rest = prompt.trim();
  let task: string | undefined;
  const to = /^@([A-Za-z0-9][A-Za-z0-9._-]{0,127})(?:[\s:,]\s*|$)/.exec(rest);
  if (to) {
    task = to[1] === 'pm' ? undefined : to[1];
    rest = rest.slice(to[0].length);
  }
  const how = /^(queue|steer|interrupt):\s*/i.exec(rest);
  const mode = (how?.[1]?.toLowerCase() ?? 'queue') as MessageMode;
  if (how) rest = rest.slice(how[0].length);
  return { ...(task === undefined ? {} : { task }), mode, text: rest.trim() };
}

/** The author a message from an ACP client is recorded with. */
export const acpAuthor = (): string => `${whoAmI()} (ACP)`;

/**
 * Sends a prompt as a message to run `runId` of `repo` and tells the client where it went. Refusals
 * (a finished task, no such task, an empty message) are AciaErrors with `acia say`'s messages.
 */
export async function sendPromptAsMessage(client: AgentContext, sessionId: string, repo: string, runId: string, prompt: string): Promise<SayResult> {
  const m = parseAddressedMessage(prompt);
  const r = await sayToRun({ repo, runId, text: m.text, mode: m.mode, author: acpAuthor(), ...(m.task === undefined ? {} : { task: m.task }) });
  const when = r.mode === 'queue' ? 'at its next turn' : r.mode === 'steer' ? 'at its next tool boundary' : 'now, stopping its model call';
  await client.notify('session/update', { sessionId, update: message(`Message ${r.id} for ${r.to === 'pm' ? 'the PM' : `task ${r.to}`} (${r.mode}): delivered ${when}.\n`) });
  return r;
}

/**
 * The plan approval gate as a permission request: the tool call carries the plans (the gate's text with
 * both trees, the graph and the estimates; the plans as JSON in rawInput). Approve, switch and abort are
 * answers; edit and reject wait for the next prompt (`edit {plan JSON}`, or the feedback), returning null.
 */
export async function askPlanApproval(client: AgentContext, sessionId: string, q: EscalationQuestion): Promise<HumanAnswer | null> {
  const chosen = q.plan?.id ?? 'the chosen plan';
  const options: PermissionOption[] = [{ optionId: 'approve', name: `Approve ${chosen} (the PM's choice)`, kind: 'allow_once' }];
  if (q.options.includes('switch')) for (const p of q.plans ?? []) if (p.id !== chosen) options.push({ optionId: `switch:${p.id}`, name: `Run ${p.id} instead`, kind: 'allow_once' });
  if (q.options.includes('edit')) options.push({ optionId: 'edit', name: 'Edit the plan (send "edit {plan JSON}" as your next message)', kind: 'reject_once' });
  if (q.options.includes('guidance')) options.push({ optionId: 'guidance', name: 'Reject the plans (say what to change in your next message)', kind: 'reject_once' });
  options.push({ optionId: 'abort', name: 'Abort the run', kind: 'reject_always' });
  const text = `${q.problem === undefined ? '' : `That answer was refused: ${q.problem}\n\n`}${q.message}`;
  const toolCall: ToolCallUpdate = {
    toolCallId: `plan-approval-${randomUUID()}`,
    title: stripControls(`Approve the plan: ${chosen} (${q.plan?.tasks.length ?? 0} task(s))`),
    kind: 'think',
    status: 'pending',
    content: [{ type: 'content', content: { type: 'text', text: stripControls(text) } }],
    rawInput: { chosenPlanId: q.plan?.id, plans: q.plans ?? (q.plan ? [q.plan] : []) },
  };
  const chosenOption = await askPermission(client, sessionId, toolCall, options);
  if (chosenOption === 'approve' || chosenOption === 'abort') return { action: chosenOption };
  if (chosenOption?.startsWith('switch:')) return { action: 'switch', text: chosenOption.slice('switch:'.length) };
  return null;
}

/**
 * Asks the client about a tool call it has first seen announced, and closes it once answered. Returns the
 * option chosen, or null when the client cancelled the request.
 */
export async function askPermission(client: AgentContext, sessionId: string, toolCall: ToolCallUpdate, options: PermissionOption[]): Promise<string | null> {
  const { toolCallId, title, kind, status, content, rawInput } = toolCall;
  await client.notify('session/update', { sessionId, update: { sessionUpdate: 'tool_call', toolCallId, title: title ?? '', kind, status, ...(content ? { content } : {}), ...(rawInput === undefined ? {} : { rawInput }) } });
  const response = await client.request('session/request_permission', { sessionId, toolCall, options });
  await client.notify('session/update', { sessionId, update: { sessionUpdate: 'tool_call_update', toolCallId, status: 'completed' } });
  return response.outcome.outcome === 'selected' ? response.outcome.optionId : null;
}
