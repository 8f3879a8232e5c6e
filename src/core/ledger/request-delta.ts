// A model request recorded as the request before it plus what changed. An agent's request is the whole
// conversation so far, so storing each one whole made a run's request blobs grow with the square of its
// turns, and cost a file (created, fsynced, linked into the bundle, committed to git) per model turn. An
// LLM_CALL whose request continues the one its agent sent before carries `request`: the earlier request's
// content address, how many of its messages are kept, and the messages after them. `requestHash` stays
// the content address of the whole request (replay matches on it), and every reader gets the whole
// request back through one function here, which checks that it hashes to `requestHash`.
import { z } from 'zod';
import { canonicalJson, CONTENT_REF, frozenJson, sha256Hex } from '../acm/canonical-json.js';

export const RequestDelta = z.object({
  /** The content address (requestHash) of the request this one continues: an earlier LLM_CALL's. */
  after: z.string().regex(CONTENT_REF),
  /** How many of that request's messages open this one. */
  keep: z.number().int().nonnegative(),
  /** The messages after them. */
  messages: z.array(z.unknown()),
});
export type RequestDelta = z.infer<typeof RequestDelta>;

/** The whole request a delta stands for, or null when the base has no `keep` messages to keep. */
export function applyRequestDelta(base: Readonly<Record<string, unknown>>, delta: RequestDelta): Record<string, unknown> | null {
  const messages: unknown = base.messages;
  if (!Array.isArray(messages) || messages.length < delta.keep) return null;
  const kept: unknown[] = messages.slice(0, delta.keep);
  return { ...base, messages: [...kept, ...delta.messages] };
}

/** An LLM_CALL's payload as far as its request goes (stored or parsed: the delta is checked here). */
export interface RequestRecord {
  requestHash: string;
  request?: unknown;
}

export type RequestLookup = { ok: true; request: Readonly<Record<string, unknown>>; text: string } | { ok: false; missing: boolean; message: string };

/**
 * The whole requests of a run's LLM_CALLs, by requestHash: a request stored as a blob is read with
 * `readBlob` (null when it cannot be), one stored as a delta is rebuilt on its base and must hash to its
 * requestHash. Bases are looked up among the records given, so give every LLM_CALL of the ledger.
 */
export class RecordedRequests {
  private readonly deltas = new Map<string, unknown>();
  private readonly known = new Map<string, RequestLookup>();

  constructor(
    records: Iterable<RequestRecord>,
    private readonly readBlob: (ref: string) => Buffer | null,
  ) {
    for (const r of records) if (r.request !== undefined && !this.deltas.has(r.requestHash)) this.deltas.set(r.requestHash, r.request);
  }

  /** Whether this requestHash is recorded as a delta (no blob of that name is written for it). */
  isDelta(requestHash: string): boolean {
    return this.deltas.has(requestHash);
  }

  get(requestHash: string): RequestLookup {
    // The chain back to a stored blob (or to a request already rebuilt), then forward: no recursion, however long the session.
    const chain: string[] = [];
    let at = requestHash;
    let base: RequestLookup | undefined;
    for (;;) {
      base = this.known.get(at);
      if (base !== undefined) break;
      if (!this.deltas.has(at)) {
        base = this.fromBlob(at);
        break;
      }
      if (chain.includes(at)) {
        base = { ok: false, missing: false, message: `request ${at} is recorded as a delta of itself` };
        break;
      }
      chain.push(at);
      const parsed = RequestDelta.safeParse(this.deltas.get(at));
      if (!parsed.success) {
        base = { ok: false, missing: false, message: `request ${at}: its delta does not read` };
        break;
      }
      at = parsed.data.after;
    }
    for (let i = chain.length - 1; i >= 0; i--) {
      const hash = chain[i]!;
      base = base.ok ? this.rebuild(hash, base.request) : { ok: false, missing: base.missing, message: `request ${hash}: its base is unavailable (${base.message})` };
      this.known.set(hash, base);
    }
    return base;
  }

  private rebuild(hash: string, base: Readonly<Record<string, unknown>>): RequestLookup {
    const delta = RequestDelta.parse(this.deltas.get(hash));
    const whole = applyRequestDelta(base, delta);
    if (whole === null) return { ok: false, missing: false, message: `request ${hash}: keeps ${delta.keep} messages of a base that has fewer` };
    // Frozen: the messages it shares with the requests after it are serialised once (canonicalJson keeps the text).
    frozenJson(whole);
    const text = canonicalJson(whole);
    if (`sha256:${sha256Hex(text)}` !== hash) return { ok: false, missing: false, message: `request ${hash}: its delta rebuilds a request that does not hash to it` };
    return { ok: true, request: whole, text };
  }

  private fromBlob(hash: string): RequestLookup {
    const bytes = this.readBlob(hash);
    if (bytes === null) return { ok: false, missing: true, message: `request ${hash} is missing` };
    const text = bytes.toString('utf8');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return { ok: false, missing: false, message: `request ${hash} is not JSON` };
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, missing: false, message: `request ${hash} is not a request` };
    const request = frozenJson(value as Record<string, unknown>);
    this.known.set(hash, { ok: true, request, text });
    return { ok: true, request, text };
  }
}
