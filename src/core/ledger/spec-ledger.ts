// The Memory Ledger in the ACM v0.5 entry schema (§5.9.2: id, timestamp, type, actor in human|llm|policy|
// engine, details, hash), as a bundle ships it for other ACM tools: one line per entry of ACIA's
// hash-chained ledger, derived from it and linked back to it (`source`). `digest` is computed as the
// reference implementation (ddse-foundation/acm, MemoryLedger.computeDigest) computes it, so its
// `validate()` accepts the lines; `hash` is the spec's content hash over the whole line.
import { canonicalJson, sha256Hex } from '../acm/canonical-json.js';
import type { LedgerEntry } from './entry.js';

export type SpecActor = 'human' | 'llm' | 'policy' | 'engine';

export interface SpecLedgerLine {
  id: string;
  timestamp: string;
  /** Epoch milliseconds: the reference reads `ts` as a number. */
  ts: number;
  type: string;
  actor: SpecActor;
  /** ACIA's own actor (`pm`, `dev:t1`, `qa:t2`, `team`, `policy`, `human`). */
  actorId: string;
  details: unknown;
  /** The entry in ACIA's hash-chained ledger this line is (memory-ledger/acia/ledger.jsonl). */
  source: { seq: number; hash: string };
  /** The reference implementation's per-entry digest: sha256 of JSON {id, ts, type, details}, 32 hex digits. */
  digest: string;
  /** sha256 over the canonical JSON of the line without `hash`, as `sha256-<hex>`. */
  hash: string;
}

/** Who decided, in the spec's four kinds: agents are models, the team is the engine. */
export function specActor(actor: string): SpecActor {
  if (actor === 'human') return 'human';
  if (actor === 'policy') return 'policy';
  if (actor === 'team') return 'engine';
  return 'llm';
}

/** The reference's digest of an entry (JSON.stringify in its key order, then sha256, first 32 hex digits). */
export function referenceDigest(e: { id: unknown; ts: unknown; type: unknown; details: unknown }): string {
  return sha256Hex(JSON.stringify({ id: e.id, ts: e.ts, type: e.type, details: e.details })).slice(0, 32);
}

export function specLedgerLine(e: LedgerEntry): SpecLedgerLine {
  const base = {
    id: `${e.runId}:${e.seq}`,
    timestamp: e.ts,
    ts: Date.parse(e.ts),
    type: e.type,
    actor: specActor(e.actor),
    actorId: e.actor,
    details: e.data,
    source: { seq: e.seq, hash: e.hash },
  };
  const withDigest = { ...base, digest: referenceDigest(base) };
  return { ...withDigest, hash: `sha256-${sha256Hex(canonicalJson(withDigest))}` };
}

/** What is wrong with one line as read back (parsed JSON): its digest and hash, when it has them. */
export function specLineProblems(line: unknown): string[] {
  if (typeof line !== 'object' || line === null || Array.isArray(line)) return ['not a JSON object'];
  const l = line as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of ['id', 'type', 'details']) if (!Object.hasOwn(l, key)) problems.push(`no ${key}`);
  if (typeof l.digest === 'string' && l.digest !== referenceDigest(l as { id: unknown; ts: unknown; type: unknown; details: unknown })) problems.push('digest does not match {id, ts, type, details}');
  if (typeof l.hash === 'string' && l.hash.startsWith('sha256-')) {
    const { hash: _hash, ...rest } = l;
    if (l.hash !== `sha256-${sha256Hex(canonicalJson(rest))}`) problems.push('hash does not match the line');
  }
  return problems;
}
