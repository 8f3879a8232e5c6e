// Structural check of ledger entries: schema (the envelope and each type's payload), seq from 0 without
// gaps, prevHash links and each entry's hash.
// Blob and anchor checks belong to `acia verify`; this is what `acia validate` can say from the file alone.
import { GENESIS_HASH } from '../acm/contracts.js';
import { zodProblems, type Problem } from '../acm/zod-paths.js';
import { decodeEventData } from './entry.js';
import { StoredLedgerEntry } from './entry-shape.js';
import { entryHash } from './hash.js';

/** Problems in a sequence of parsed entries; entry i is reported at path `$[i]`. */
export function checkLedgerChain(entries: readonly unknown[]): Problem[] {
  const problems: Problem[] = [];
  let prev: { hash: string; runId: string } | null = null;
  entries.forEach((raw, i) => {
    const base = `$[${i}]`;
    const parsed = StoredLedgerEntry.safeParse(raw);
    if (!parsed.success) {
      problems.push(...zodProblems(parsed.error, base));
      prev = null; // the chain cannot be followed past an unreadable entry
      return;
    }
    const entry = parsed.data;
    const data = decodeEventData(entry.type, entry.v ?? 1, entry.data);
    if (!data.ok) problems.push({ path: `${base}.data`, code: 'LEDGER_DATA', message: data.message });
    if (entry.seq !== i) problems.push({ path: `${base}.seq`, code: 'LEDGER_SEQ', message: `seq ${entry.seq}, expected ${i}` });
    const expectedPrev = i === 0 ? GENESIS_HASH : prev?.hash;
    if (expectedPrev !== undefined && entry.prevHash !== expectedPrev) {
      problems.push({
        path: `${base}.prevHash`,
        code: 'LEDGER_LINK',
        message: i === 0 ? 'the first entry must link to the genesis hash (64 zeros)' : `does not link to entry ${i - 1} (its hash is ${expectedPrev})`,
      });
    }
    const actual = entryHash(entry);
    if (entry.hash !== actual) problems.push({ path: `${base}.hash`, code: 'LEDGER_HASH', message: `hash does not match the entry's content (computed ${actual})` });
    if (prev !== null && entry.runId !== prev.runId) {
      problems.push({ path: `${base}.runId`, code: 'LEDGER_RUN', message: `run id ${entry.runId} differs from the ledger's ${prev.runId}` });
    }
    prev = { hash: entry.hash, runId: entry.runId };
  });
  return problems;
}
