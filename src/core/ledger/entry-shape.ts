// The envelope of a stored ledger entry (everything but the payload's shape) and a fast structural check
// of a parsed line for verify's and open's hot loops. The check accepts only what the StoredLedgerEntry
// zod contract accepts (a strict subset: canonical timestamps); anything it refuses is re-checked with
// the contract itself, which gives the precise message.
import { z } from 'zod';
import { Actor, HASH_HEX } from '../acm/contracts.js';
import { RunId, Seq } from '../acm/ids.js';
import { isRunId } from '../contain/run-id.js';
import { LEDGER_ENTRY_TYPES, LedgerEntryType } from './events.js';

/**
 * An entry as stored: the hash covers exactly these members (canonical JSON without `hash`). `data` is
 * checked against its type's schema by parseLedgerEntry (entry.ts), not here: verify and the chain check
 * read stored entries, every other reader reads parsed ones. `v` is the payload's version when above 1.
 */
export const StoredLedgerEntry = z.strictObject({
  seq: Seq,
  ts: z.iso.datetime(),
  runId: RunId,
  actor: Actor,
  type: LedgerEntryType,
  v: z.number().int().min(2).optional(),
  data: z.unknown(),
  prevHash: z.string().regex(HASH_HEX),
  hash: z.string().regex(HASH_HEX),
});
export type StoredLedgerEntry = z.infer<typeof StoredLedgerEntry>;

const TYPES: ReadonlySet<string> = new Set(LEDGER_ENTRY_TYPES);
const HEX64 = /^[0-9a-f]{64}$/;
const ACTOR = /^(pm|team|policy|human|(dev|qa|pm):[A-Za-z_][A-Za-z0-9_-]*)$/;
const TS = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?Z$/;

export type ShapeResult = { ok: true; entry: StoredLedgerEntry } | { ok: false; message: string };

export function checkEntryShape(value: unknown): ShapeResult {
  if (looksLikeEntry(value)) return { ok: true, entry: value };
  const parsed = StoredLedgerEntry.safeParse(value);
  if (parsed.success) return { ok: true, entry: parsed.data };
  const type = typeof value === 'object' && value !== null && 'type' in value ? value.type : undefined;
  if (typeof type === 'string' && !TYPES.has(type) && /^[A-Z][A-Z0-9_]*$/.test(type)) {
    return { ok: false, message: `type: ${type} is not an entry type this acia knows (a ledger written by a newer version?)` };
  }
  const issue = parsed.error.issues[0];
  return { ok: false, message: `${issue?.path.join('.') ?? ''}: ${issue?.message ?? ''}` };
}

function looksLikeEntry(v: unknown): v is StoredLedgerEntry {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const e = v as Record<string, unknown>;
  let keys = 0;
  for (const _ in e) keys += 1;
  return (
    (keys === 8 || (keys === 9 && typeof e.v === 'number' && Number.isInteger(e.v) && e.v >= 2)) &&
    'data' in e &&
    typeof e.seq === 'number' && Number.isSafeInteger(e.seq) && e.seq >= 0 &&
    typeof e.ts === 'string' && TS.test(e.ts) &&
    isRunId(e.runId) &&
    typeof e.actor === 'string' && ACTOR.test(e.actor) &&
    typeof e.type === 'string' && TYPES.has(e.type) &&
    typeof e.prevHash === 'string' && HEX64.test(e.prevHash) &&
    typeof e.hash === 'string' && HEX64.test(e.hash)
  );
}
