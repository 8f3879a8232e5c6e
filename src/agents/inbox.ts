// Where messages from humans reach a running agent. The team implements it (team/mailbox.ts: live from
// the run's inbox, or from the recording in a replay); the loop only says where in the session it stands,
// so a message lands at the point its mode asks for and the ledger can say which point that was.
import { frozenJson } from '../core/acm/canonical-json.js';
import type { Message, UserBlock } from '../core/llm/types.js';

/**
 * - `turn`: before a model request (every mode is delivered there);
 * - `tool_boundary`: a tool call just ended (steer and interrupt are delivered; the turn's other calls wait);
 * - `interrupt`: a model call was stopped for an interrupting message;
 * - `result`: the agent delivered its result and a message is still waiting (it is told before it is done).
 */
export type InboxPoint = { at: 'turn' | 'interrupt'; turn: number } | { at: 'tool_boundary' | 'result'; turn: number; afterToolUseId: string };

export interface AgentInbox {
  /** The messages to deliver at this point, as text for the model; each is recorded as delivered here. */
  take(point: InboxPoint): Promise<string[]>;
  /** The signal for the next model call: aborted when an interrupting message arrives (at once when one waits). */
  callSignal(): AbortSignal | undefined;
}

/** The conversation with `texts` added to its last (user) message, which is replaced, never changed. */
export function appendToLastUser(messages: Message[], texts: readonly string[]): void {
  const last = messages.at(-1);
  if (texts.length === 0 || last?.role !== 'user') return;
  const blocks: UserBlock[] = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : [...last.content];
  for (const text of texts) blocks.push({ type: 'text', text });
  messages[messages.length - 1] = frozenJson({ role: 'user', content: blocks });
}
