// Keeps a conversation inside the model's window by eliding old tool output first. The system prompt,
// the first message (the task, with AGENTS.md / CLAUDE.md) and the latest turns are never touched, so
// the cached prompt prefix stays stable.
import { isFrozenJson } from '../core/acm/canonical-json.js';
import type { Message } from '../core/llm/types.js';

export const KEEP_LATEST_MESSAGES = 4;
const ELIDE_MIN_CHARS = 400;

/** The size of each message frozenJson() froze (it cannot change): measured once, not every turn. */
const measured = new WeakMap<Message, number>();

export function estimateMessageChars(messages: readonly Message[]): number {
  let n = 0;
  for (const m of messages) {
    let chars = measured.get(m);
    if (chars === undefined) {
      chars = charsOf(m);
      if (isFrozenJson(m)) measured.set(m, chars);
    }
    n += chars;
  }
  return n;
}

function charsOf(m: Message): number {
  if (typeof m.content === 'string') return m.content.length;
  let n = 0;
  for (const b of m.content) n += b.type === 'text' ? b.text.length : b.type === 'tool_result' ? b.content.length : JSON.stringify(b.input ?? null).length + b.name.length;
  return n;
}

/**
 * Replaces the content of the oldest large tool results with a note until the estimated token count
 * (chars / 4) is at most `maxTokens`. Returns how many results were elided.
 */
export function elideOldToolOutput(messages: Message[], maxTokens: number, fixedChars = 0): number {
  let elided = 0;
  const last = messages.length - KEEP_LATEST_MESSAGES;
  for (let i = 1; i < last && (fixedChars + estimateMessageChars(messages)) / 4 > maxTokens; i++) {
    const m = messages[i];
    if (m?.role !== 'user' || typeof m.content === 'string') continue;
    messages[i] = {
      role: 'user',
      content: m.content.map((b) => {
        if (b.type !== 'tool_result' || b.content.length < ELIDE_MIN_CHARS) return b;
        elided++;
        return { ...b, content: `[elided to save context: ${b.content.length} characters of earlier tool output]` };
      }),
    };
  }
  return elided;
}
