// Blobs an entry carries inline instead of as a file beside the ledger: a model call's response (small,
// one per model turn) is in its LLM_CALL, under the hash chain, as the exact bytes `responseRef` addresses.
// A turn then creates no file: the request is a delta of the one before (request-delta.ts) and the
// response is in the entry, so nothing is fsynced, linked into the bundle or committed to git per turn.
import { sha256Hex } from '../acm/canonical-json.js';
import type { LedgerEntry } from './entry.js';

/** Above this many characters a response is stored as a blob file, as before: ledger lines stay small. */
export const MAX_INLINE_RESPONSE = 16 * 1024;

/** The reference keys whose blob may be carried inline, and the key beside them that carries it. */
export const INLINE_BESIDE: Readonly<Record<string, string>> = { responseRef: 'response' };

/** The text an entry carries inline for `ref`, or null (the blob is then a file, or missing). */
export function inlineBlobOf(entry: LedgerEntry, ref: string): string | null {
  return entry.type === 'LLM_CALL' && entry.data.responseRef === ref && entry.data.response !== undefined ? entry.data.response : null;
}

/** The first inline copy of `ref` among `entries`, as bytes, or null. */
export function findInlineBlob(entries: Iterable<LedgerEntry>, ref: string): Buffer | null {
  for (const e of entries) {
    const text = inlineBlobOf(e, ref);
    if (text !== null) return Buffer.from(text, 'utf8');
  }
  return null;
}

/** Whether a stored payload's inline blobs hash to their references; the reference of the first that does not. */
export function alteredInlineBlob(data: unknown): string | null {
  if (typeof data !== 'object' || data === null) return null;
  const record = data as Record<string, unknown>;
  for (const [refKey, key] of Object.entries(INLINE_BESIDE)) {
    const ref = record[refKey];
    const text = record[key];
    if (typeof ref === 'string' && typeof text === 'string' && ref !== `sha256:${sha256Hex(text)}`) return ref;
  }
  return null;
}
