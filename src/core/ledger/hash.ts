// The ledger's hash rule, shared by the writer, verify and validate: sha256 over the canonical JSON of
// the stored entry without its `hash` field.
import { canonicalJson, sha256Hex } from '../acm/canonical-json.js';
import type { StoredLedgerEntry } from './entry-shape.js';

export type UnhashedEntry = Omit<StoredLedgerEntry, 'hash'>;

export function entryHash(entry: UnhashedEntry): string {
  const { seq, ts, runId, actor, type, v, data, prevHash } = entry;
  return sha256Hex(canonicalJson({ seq, ts, runId, actor, type, ...(v === undefined ? {} : { v }), data, prevHash }));
}

/**
 * Whether a stored line's `hash` is its content's. Fast path: a line the ledger wrote is canonical JSON,
 * so the hashed text is the line with its top-level `"hash"` member cut out; hashing those bytes avoids
 * re-serialising. Only if that fails is the entry re-serialised canonically (a writer that formatted
 * differently but hashed the same content).
 */
export function lineHashMatches(text: string, entry: StoredLedgerEntry): boolean {
  const member = `,"hash":"${entry.hash}"`;
  const at = text.lastIndexOf(`${member},"prevHash":"`);
  if (at !== -1) {
    if (sha256Hex(text.slice(0, at) + text.slice(at + member.length)) === entry.hash) return true;
  }
  return entryHash(entry) === entry.hash;
}
