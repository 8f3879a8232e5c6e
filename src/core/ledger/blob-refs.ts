// Which strings in an entry's data are blob references: the rule verify and the bundle share.
import { CONTENT_REF } from '../acm/canonical-json.js';
import { INLINE_BESIDE } from './inline-blobs.js';

/**
 * A blob reference is a `sha256:<hex>` string under a key named `ref`/`refs` or ending in `Ref`/`Refs`
 * (`responseRef`, `outputRef`, `packetRef`, `beforeRef`, ...), at any depth. Two keys are content
 * addresses of values, not stored blobs, and are excluded: `contextRef` (the packet's identity; the
 * packet itself is `packetRef`). `requestHash` (LLM_CALL) names a stored blob too, the request as sent: a
 * verify that skipped it would pass a ledger whose recorded prompts were swapped. Except beside `request`:
 * an LLM_CALL whose request is stored as a delta of an earlier one (request-delta.ts) has no blob of that
 * name, and its readers rebuild the request and check it against requestHash instead. Nor is a reference
 * whose blob the entry carries inline (inline-blobs.ts: an LLM_CALL's `response` beside its responseRef).
 */
const REF_KEY = /(?:^refs?|Refs?|^requestHash)$/;
const NOT_BLOB_KEYS: ReadonlySet<string> = new Set(['contextRef']);

export function collectBlobRefs(data: unknown, out: Set<string> = new Set()): Set<string> {
  walk(data, false, out);
  return out;
}

function walk(value: unknown, underRefKey: boolean, out: Set<string>): void {
  if (typeof value === 'string') {
    if (underRefKey && CONTENT_REF.test(value)) out.add(value);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) walk(item, underRefKey, out);
    return;
  }
  if (value !== null && typeof value === 'object') {
    // for-in rather than Object.entries: verify walks every entry's data, and the pairs array was most of it.
    const record = value as Record<string, unknown>;
    const deltaRequest = record.request !== undefined && typeof record.requestHash === 'string';
    for (const key in record) {
      if (!Object.hasOwn(record, key)) continue;
      const inline = INLINE_BESIDE[key];
      const carried = (deltaRequest && key === 'requestHash') || (inline !== undefined && typeof record[inline] === 'string');
      walk(record[key], REF_KEY.test(key) && !NOT_BLOB_KEYS.has(key) && !carried, out);
    }
  }
}
