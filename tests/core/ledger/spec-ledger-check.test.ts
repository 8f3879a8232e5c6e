// `acia validate` of a Memory Ledger in the ACM v0.5 entry schema (§5.9.2), as bundles ship it.
import { describe, expect, it } from 'vitest';
import { validateDocument } from '../../../src/core/acm/validate-document.js';
import type { LedgerEntry } from '../../../src/core/ledger/entry.js';
import { specLedgerLine } from '../../../src/core/ledger/spec-ledger.js';

const entry = (seq: number, ts: string, actor: string) => ({ seq, ts, runId: 'r', actor, type: 'BRANCH_TAKEN', data: { from: 't1', to: 't2' }, prevHash: '', hash: `h${seq}` }) as unknown as LedgerEntry;
const text = (lines: unknown[]) => `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;

describe('the spec-schema Memory Ledger', () => {
  const good = [specLedgerLine(entry(1, '2026-01-01T00:00:01.000Z', 'team')), specLedgerLine(entry(2, '2026-01-01T00:00:02.000Z', 'policy'))];

  it('is recognised by its lines and accepted when every entry has the spec fields, its digest and hash', () => {
    expect(validateDocument(text(good), 'ledger.jsonl')).toMatchObject({ status: 'checked', kind: 'acm-ledger', ok: true, summary: 'ACM memory ledger, 2 entries' });
    expect(good.map((l) => l.actor)).toEqual(['engine', 'policy']);
  });

  it('refuses entries out of time order, a repeated id, an actor outside the four, and an edited entry', () => {
    const late = specLedgerLine(entry(3, '2026-01-01T00:00:00.500Z', 'dev:t1'));
    const twin = { ...good[0]!, actor: 'robot' };
    const edited = { ...good[1]!, details: { from: 't1', to: 't9' } };
    const again = specLedgerLine(entry(1, '2026-01-01T00:00:03.000Z', 'team'));
    const r = validateDocument(text([good[0], edited, late, twin, again]), 'ledger.jsonl');
    expect(r.status === 'checked' && r.errors.map((e) => `${e.path} ${e.code}`)).toEqual(['$[1] LEDGER_DIGEST', '$[1] LEDGER_DIGEST', '$[2].timestamp LEDGER_ORDER', '$[3].actor SCHEMA', '$[3] LEDGER_DIGEST', '$[4].id LEDGER_DUPLICATE_ID']);
  });
});
