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
  // acia 0.1.0: the escalate demo (a fix loop that runs out, a human question), resumed with --answer abort.
  '20261123-225222-616f11': { acia: '0.1.0', reason: 'aborted', tasks: { t1: 'completed', t2: 'failed', 't2-fix1': 'completed', 't2-r1': 'failed' } },
  // acia 0.1.0: the plan-b demo (Plan-A fails, compensation, re-plan to Plan-B, which passes).
  '20261123-225225-126176': { acia: '0.1.0', reason: 'succeeded', tasks: { b1: 'completed', b2: 'completed' } },
  // acia 0.1.0: the budget demo (stopped before the call that would pass the token budget).
  '20261123-225228-473fc0': { acia: '0.1.0', reason: 'budget_exhausted', tasks: { t1: 'running', t2: 'pending' } },
};

/** Entry types the fixtures must hold between them, so the resume, re-plan and budget paths of the fold are covered. */
const COVERED = ['ESCALATION_REQUESTED', 'HUMAN_RESPONSE', 'RUN_RESUMED', 'TASK_ADDED', 'TASK_FAILED', 'MEMORY_UPDATED', 'COMPENSATION_APPLIED', 'REPLAN_TRIGGERED', 'BUDGET_EXCEEDED', 'CHECKPOINT', 'MERGE'];

describe('ledger fixtures from earlier versions', () => {
  const runs = readdirSync(DIR);
  it('has an expectation for every fixture', () => {
    expect(runs.sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it('between them hold the entry types of a resume, a re-plan and a budget stop', () => {
    const types = new Set(runs.flatMap((r) => readFileSync(join(DIR, r, 'ledger.jsonl'), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as LedgerEntry).type as string)));
    expect(COVERED.filter((t) => !types.has(t))).toEqual([]);
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
