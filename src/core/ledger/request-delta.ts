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
 * How many characters of requests one ledger's deltas may rebuild to. A delta line of a hundred bytes can
 * stand for a request of megabytes (a long conversation, or a forged fan-out on one large base), so a
 * third party's bundle could otherwise make `acia verify` hash and hold gigabytes. Far above what a run
 * records: a 200-turn run's requests come to tens of megabytes.
 */
export const MAX_REBUILT_CHARS = 2 * 1024 ** 3;
/** What each message slot of a rebuilt request counts against that budget: the array entry it keeps (8 bytes), so
 * that a chain of tiny messages holds at most a few hundred megabytes of arrays, not gigabytes. */
const SLOT_CHARS = 64;

/**
 * The whole requests of a run's LLM_CALLs, by requestHash: a request stored as a blob is read with
 * `readBlob` (null when it cannot be), one stored as a delta is rebuilt on its base and must hash to its
 * requestHash. Bases are looked up among the records given, so give every LLM_CALL of the ledger.
 * Rebuilt requests are kept as objects (their messages shared with their base), not as text: a ledger's
 * requests together are far larger than the ledger.
 */
export class RecordedRequests {
  private readonly deltas = new Map<string, unknown>();
  private readonly known = new Map<string, Known>();
  private readonly maxRebuiltChars: number;
  private rebuiltChars = 0;

  constructor(
    records: Iterable<RequestRecord>,
    private readonly readBlob: (ref: string) => Buffer | null,
    options: { maxRebuiltChars?: number } = {},
  ) {
    this.maxRebuiltChars = options.maxRebuiltChars ?? MAX_REBUILT_CHARS;
    for (const r of records) if (r.request !== undefined && !this.deltas.has(r.requestHash)) this.deltas.set(r.requestHash, r.request);
  }

  /** Whether this requestHash is recorded as a delta (no blob of that name is written for it). */
  isDelta(requestHash: string): boolean {
    return this.deltas.has(requestHash);
  }

  get(requestHash: string): RequestLookup {
    const found = this.find(requestHash);
    return found.ok ? { ok: true, request: found.request, text: found.text ?? canonicalJson(found.request) } : found;
  }

  /**
   * Whether one stored delta rebuilds its own requestHash. Several LLM_CALLs may name one request (a call
   * made again) and `get` rebuilds it from the first: verify checks every one, so none carries words that
   * rebuild nothing. No text is made: verify needs none.
   */
  check(record: RequestRecord): { ok: true } | { ok: false; missing: boolean; message: string } {
    if (record.request === undefined || this.deltas.get(record.requestHash) === record.request) return this.find(record.requestHash);
    const parsed = RequestDelta.safeParse(record.request);
    if (!parsed.success) return { ok: false, missing: false, message: `request ${record.requestHash}: its delta does not read` };
    const base = this.find(parsed.data.after);
    if (!base.ok) return { ok: false, missing: base.missing, message: `request ${record.requestHash}: its base is unavailable (${base.message})` };
    return this.rebuild(record.requestHash, parsed.data, base.request);
  }

  private find(requestHash: string): Known {
    // The chain back to a stored blob (or to a request already rebuilt), then forward: no recursion, however
    // long the session, and each step looked at once, however the ledger orders the chain.
    const chain: string[] = [];
    const inChain = new Set<string>();
    let at = requestHash;
    let base: Known | undefined;
    for (;;) {
      base = this.known.get(at);
      if (base !== undefined) break;
      if (!this.deltas.has(at)) {
        base = this.fromBlob(at);
        break;
      }
      if (inChain.has(at)) {
        base = { ok: false, missing: false, message: `request ${at} is recorded as a delta of itself` };
        break;
      }
      chain.push(at);
      inChain.add(at);
      const parsed = RequestDelta.safeParse(this.deltas.get(at));
      if (!parsed.success) {
        base = { ok: false, missing: false, message: `request ${at}: its delta does not read` };
        break;
      }
      at = parsed.data.after;
    }
    for (let i = chain.length - 1; i >= 0; i--) {
      const hash = chain[i]!;
      base = base.ok ? this.rebuild(hash, RequestDelta.parse(this.deltas.get(hash)), base.request) : { ok: false, missing: base.missing, message: `request ${hash}: its base is unavailable (${base.message})` };
      // Kept without its text: the next request's text is built from its messages' (each serialised once).
      this.known.set(hash, base.ok ? { ok: true, request: base.request } : base);
    }
    return base;
  }

  private rebuild(hash: string, delta: RequestDelta, base: Readonly<Record<string, unknown>>): Known {
    const whole = applyRequestDelta(base, delta);
    if (whole === null) return { ok: false, missing: false, message: `request ${hash}: keeps ${delta.keep} messages of a base that has fewer` };
    // The new messages frozen: the requests after this one share them, and canonicalJson keeps their text.
    // The request itself only shallowly frozen, so that its own text is not kept with it.
    frozenJson(delta.messages);
    Object.freeze(whole.messages);
    Object.freeze(whole);
    const messages = whole.messages as unknown[];
    this.rebuiltChars += SLOT_CHARS * messages.length;
    if (this.rebuiltChars > this.maxRebuiltChars) return this.overBudget(hash);
    const text = canonicalJson(whole);
    this.rebuiltChars += text.length;
    if (this.rebuiltChars > this.maxRebuiltChars) return this.overBudget(hash);
    if (`sha256:${sha256Hex(text)}` !== hash) return { ok: false, missing: false, message: `request ${hash}: its delta rebuilds a request that does not hash to it` };
    return { ok: true, request: whole, text };
  }

  private overBudget(hash: string): Known {
    return { ok: false, missing: false, message: `request ${hash}: not rebuilt, the ledger's deltas stand for more than ${this.maxRebuiltChars} characters of requests` };
  }

  private fromBlob(hash: string): Known {
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
    // Kept with its text: these are the blob's bytes (which need not be canonical), no larger than the file.
    this.known.set(hash, { ok: true, request, text });
    return { ok: true, request, text };
  }
}

/** A request found: its text when read from a blob or just rebuilt (a rebuilt one's is not kept, see RecordedRequests). */
type Known = { ok: true; request: Readonly<Record<string, unknown>>; text?: string } | { ok: false; missing: boolean; message: string };
