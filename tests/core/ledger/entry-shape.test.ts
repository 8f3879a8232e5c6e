import { describe, expect, it } from 'vitest';
import { checkEntryShape, StoredLedgerEntry } from '../../../src/core/ledger/entry-shape.js';

const good = { seq: 0, ts: '2026-01-02T03:04:05.000Z', runId: 'r1', actor: 'dev:t1', type: 'GOAL_AMENDED', data: {}, prevHash: '0'.repeat(64), hash: 'a'.repeat(64) };

describe('checkEntryShape', () => {
  it('accepts exactly what the LedgerEntry contract accepts', () => {
    const cases: unknown[] = [
      good,
      { ...good, seq: -1 },
      { ...good, seq: 1.5 },
      { ...good, ts: '2026-13-02T03:04:05Z' },
      { ...good, actor: 'root' },
      { ...good, type: 'NOPE' },
      { ...good, hash: 'A'.repeat(64) },
      { ...good, extra: 1 },
      { ...good, runId: '../x' },
      null,
      [good],
    ];
    for (const c of cases) expect(checkEntryShape(c).ok, JSON.stringify(c)).toBe(StoredLedgerEntry.safeParse(c).success);
  });

  it('explains a refusal with the contract path', () => {
    const r = checkEntryShape({ ...good, actor: 'root' });
    expect(r.ok ? '' : r.message).toMatch(/^actor: /);
  });
});
