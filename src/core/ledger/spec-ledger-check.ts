// `acia validate` of a Memory Ledger in the ACM v0.5 entry schema (§5.9.2): the file a replay bundle ships
// as `memory-ledger/ledger.jsonl`, ACIA's or another implementation's. ACIA's own hash-chained ledger is
// checked by check-chain.ts; this one has no chain, so each line is checked on its own (fields, the
// reference's digest and the spec's hash when present) and the lines together for order and unique ids.
import { z } from 'zod';
import { zodProblems, type Problem } from '../acm/zod-paths.js';
import { specLineProblems } from './spec-ledger.js';

// The spec's fields; other members (the reference's numeric `ts` and `digest`, ACIA's `source`) are extensions.
const SpecLine = z.looseObject({
  id: z.string().min(1),
  timestamp: z.iso.datetime({ offset: true }),
  type: z.string().min(1),
  actor: z.enum(['human', 'llm', 'policy', 'engine']),
  details: z.record(z.string(), z.unknown()),
  hash: z.string().min(1),
  signature: z.string().optional(),
});

/** Whether a parsed first line is an entry of the spec's schema rather than of ACIA's chain. */
export function looksLikeSpecLedgerLine(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const has = (k: string) => Object.hasOwn(value, k);
  return has('id') && has('type') && has('details') && !has('prevHash');
}

export function specLedgerProblems(entries: readonly unknown[]): Problem[] {
  const problems: Problem[] = [];
  const seen = new Map<string, number>();
  let lastTime = -Infinity;
  for (const [i, e] of entries.entries()) {
    const base = `$[${i}]`;
    const parsed = SpecLine.safeParse(e);
    if (!parsed.success) problems.push(...zodProblems(parsed.error, base));
    for (const p of specLineProblems(e)) if (!p.startsWith('no ')) problems.push({ path: base, code: 'LEDGER_DIGEST', message: p });
    if (!parsed.success) continue;
    const first = seen.get(parsed.data.id);
    if (first !== undefined) problems.push({ path: `${base}.id`, code: 'LEDGER_DUPLICATE_ID', message: `id '${parsed.data.id}' is also entry ${first}'s` });
    seen.set(parsed.data.id, i);
    // Entries MUST be ordered (§5.9.3): by time, which equal times do not break.
    const t = Date.parse(parsed.data.timestamp);
    if (t < lastTime) problems.push({ path: `${base}.timestamp`, code: 'LEDGER_ORDER', message: `${parsed.data.timestamp} is earlier than the entry before it` });
    lastTime = Math.max(lastTime, t);
  }
  return problems;
}
