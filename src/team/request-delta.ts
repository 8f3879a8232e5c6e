// Which model requests an agent session records as a delta of its previous one (core/ledger/request-delta.ts):
// an agent's next request is its last one plus the reply and the tool results, so only those are new.
import { canonicalJson } from '../core/acm/canonical-json.js';
import type { RequestDelta } from '../core/ledger/request-delta.js';
import type { LlmRequest } from '../core/llm/types.js';

/**
 * Above this many characters of new messages the request is stored whole, as a blob: a ledger line stays
 * small enough to read and verify quickly, and a conversation rewritten from far back (old tool output
 * elided) is no delta worth the name.
 */
export const MAX_DELTA_CHARS = 32 * 1024;

/** The request this session recorded last, and its content address. */
export interface SentRequest {
  request: LlmRequest;
  hash: string;
}

/**
 * `request` as a delta of `sent`, or null when it must be stored whole: another model, system prompt, tool
 * set or limit, nothing kept, or too much new. Messages are compared by identity: the agent loop freezes each
 * message as it joins the conversation and passes the same objects again, so an unchanged prefix is the same
 * objects, and a message replaced (a human's words added to it, old tool output elided) is a new one.
 */
export function requestDelta(sent: SentRequest | null, request: LlmRequest): RequestDelta | null {
  if (sent === null) return null;
  const before = sent.request;
  if (before.model !== request.model || before.system !== request.system || before.tools !== request.tools || before.maxTokens !== request.maxTokens || before.temperature !== request.temperature) return null;
  let keep = 0;
  const max = Math.min(before.messages.length, request.messages.length);
  while (keep < max && before.messages[keep] === request.messages[keep]) keep++;
  if (keep === 0) return null;
  const messages = request.messages.slice(keep);
  // Frozen messages serialise from the text canonicalJson kept: this costs what sealing the entry will.
  if (canonicalJson(messages).length > MAX_DELTA_CHARS) return null;
  return { after: sent.hash, keep, messages };
}
