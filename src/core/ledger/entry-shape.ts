// A fast structural check of a parsed ledger line, for verify's hot loop. It accepts only what the
// LedgerEntry zod contract accepts (a strict subset: canonical timestamps); anything it refuses is
// re-checked with the contract itself, which gives the precise message.
import { LEDGER_ENTRY_TYPES, LedgerEntry } from '../acm/contracts.js';
import { isRunId } from '../contain/run-id.js';

const TYPES: ReadonlySet<string> = new Set(LEDGER_ENTRY_TYPES);
const HEX64 = /^[0-9a-f]{64}$/;
const ACTOR = /^(pm|team|policy|human|(dev|qa|pm):[A-Za-z_][A-Za-z0-9_-]*)$/;
const TS = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?Z$/;

export type ShapeResult = { ok: true; entry: LedgerEntry } | { ok: false; message: string };

export function checkEntryShape(value: unknown): ShapeResult {
  if (looksLikeEntry(value)) return { ok: true, entry: value };
  const parsed = LedgerEntry.safeParse(value);
  if (parsed.success) return { ok: true, entry: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, message: `${issue?.path.join('.') ?? ''}: ${issue?.message ?? ''}` };
}

function looksLikeEntry(v: unknown): v is LedgerEntry {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const e = v as Record<string, unknown>;
  let keys = 0;
  for (const _ in e) keys += 1;
  return (
    keys === 8 &&
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
