// Ledgers written by earlier versions of ACIA must still verify and fold: a change to the entry shapes, the
// hash chain or the fold that breaks an old run's resume, replay or `acia runs` fails here. Add a fixture
// (a whole .acia/runs/<runId> directory) whenever the ledger format changes; never edit one.
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/core/acm/contracts.js';
import { verifyRun } from '../../src/core/ledger/verify.js';
import { foldRun } from '../../src/team/run-state.js';

const DIR = resolve(import.meta.dirname, '../fixtures/ledgers');

/** What each fixture's run did, so the fold is checked against what happened, not just that it ran. */
const EXPECTED: Record<string, { acia: string; reason: string; tasks: Record<string, string> }> = {
  // acia 0.1.0 (issue 15 head): the happy scenario, scripted, --sandbox off --parallel 1.
  '20261123-203349-87ccfc': { acia: '0.1.0', reason: 'succeeded', tasks: { t1: 'completed', t2: 'completed' } },
};

describe('ledger fixtures from earlier versions', () => {
  const runs = readdirSync(DIR);
  it('has an expectation for every fixture', () => {
    expect(runs.sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const runId of runs) {
    it(`${runId} still verifies and folds to the run it recorded`, async () => {
      const runDir = join(DIR, runId);
      const verification = await verifyRun(runDir);
      expect(verification.problems).toEqual([]);
      expect(verification.ok).toBe(true);
      const entries = readFileSync(join(runDir, 'ledger.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as LedgerEntry);
      const state = foldRun(entries);
      const want = EXPECTED[runId]!;
      expect(state.started?.aciaVersion).toBe(want.acia);
      expect(state.completed?.reason).toBe(want.reason);
      expect(Object.fromEntries([...state.tasks].map(([id, t]) => [id, t.status]))).toEqual(want.tasks);
      expect(state.lastSeq).toBe(entries.at(-1)!.seq);
    });
  }
});
