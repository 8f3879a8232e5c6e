// The ledger's hash rule, shared by the writer, verify and validate: sha256 over the canonical JSON of
// the entry without its `hash` field.
import { canonicalJson, sha256Hex } from '../acm/canonical-json.js';
import type { LedgerEntry } from '../acm/contracts.js';

export type UnhashedEntry = Omit<LedgerEntry, 'hash'>;

export function entryHash(entry: UnhashedEntry): string {
  const { seq, ts, runId, actor, type, data, prevHash } = entry;
  return sha256Hex(canonicalJson({ seq, ts, runId, actor, type, data, prevHash }));
}
