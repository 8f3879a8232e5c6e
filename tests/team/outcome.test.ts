// The outcome rule and the routing it depends on, through the real executor in-process.
import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { foldRun } from '../../src/team/run-state.js';
import { judgeRun } from '../../src/team/outcome.js';
import { runPlanInProcess, scriptedHuman } from './inprocess.js';

const types = (entries: readonly LedgerEntry[], type: string) => entries.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);

describe('outcome rule (in-process executor)', () => {
  it('succeeds when every task completed and the tests pass on the final head', async () => {
    const { result, entries } = await runPlanInProcess({
      tasks: [{ id: 'd1', capability: 'dev.implement' }, { id: 'q1', capability: 'qa.verify' }],
      edges: [{ from: 'd1', to: 'q1' }],
      joins: [],
    });
    expect(result.reason, result.message).toBe('succeeded');
    expect(judgeRun(foldRun(entries)).verdict).toBe('succeeded');
  });
});

const skipsOf = (entries: readonly LedgerEntry[]) => types(entries, 'TASK_SKIPPED').map((d) => `${String(d.taskId)}:${String(d.cause)}`);

describe('outcome rule: proof on the final head', () => {
  it('runs the tests itself on the final head when no QA task did, and records the commit', async () => {
    const { result, entries } = await runPlanInProcess({ tasks: [{ id: 'd1', capability: 'dev.implement' }], edges: [], joins: [] });
    expect(result.reason, result.message).toBe('succeeded');
    const v = types(entries, 'VERIFICATION').at(-1)!;
    expect(v).toMatchObject({ taskId: '@final', source: 'team_run', exitCode: 0 });
    const merge = types(entries, 'MERGE').at(-1)!;
    expect(v.commit).toBe(merge.commit);
  });

  it('fails a run whose merged work breaks the tests even though every task completed', async () => {
    const { result, entries } = await runPlanInProcess({ tasks: [{ id: 'd1', capability: 'dev.implement', breaks: true }], edges: [], joins: [] });
    expect(result.reason).toBe('verification_failed');
    expect(result.message).toContain('the tests fail on the final run-branch head');
    expect(types(entries, 'TASK_COMPLETED').map((d) => d.taskId)).toEqual(['d1']);
  });
});

describe('error routing', () => {
  it('sends COMPENSATION_REQUIRED along the compensation edge, records the choice, and ends by the verdict', async () => {
    const { result, entries } = await runPlanInProcess({
      tasks: [
        { id: 'd1', capability: 'dev.implement', touchesProtected: true },
        { id: 'undo', capability: 'dev.implement' },
        { id: 'd2', capability: 'dev.implement' },
      ],
      edges: [{ from: 'd1', to: 'undo', onError: 'COMPENSATION_REQUIRED' }, { from: 'd1', to: 'd2' }],
      joins: [],
    });
    expect(types(entries, 'ESCALATION_REQUESTED')).toEqual([]);
    expect(types(entries, 'BRANCH_TAKEN')).toContainEqual(expect.objectContaining({ from: 'd1', to: 'undo', onError: 'COMPENSATION_REQUIRED', value: true }));
    expect(types(entries, 'TASK_COMPLETED').map((d) => d.taskId)).toEqual(['undo']);
    expect(skipsOf(entries)).toEqual(['d2:upstream']);
    expect(result.reason).toBe('failed');
    expect(result.message).toContain('task d1 failed: policy denied the change');
  });

  it('without a compensation edge asks a human; skip skips that task only and the plan goes on, but the run is not a success', async () => {
    const { result, entries } = await runPlanInProcess(
      {
        tasks: [
          { id: 'd1', capability: 'dev.implement', touchesProtected: true },
          { id: 'd2', capability: 'dev.implement' },
          { id: 'q1', capability: 'qa.verify' },
        ],
        edges: [{ from: 'd1', to: 'd2' }, { from: 'd2', to: 'q1' }],
        joins: [],
      },
      { human: scriptedHuman([{ action: 'skip' }]) },
    );
    expect(types(entries, 'ESCALATION_REQUESTED').map((d) => d.reason)).toEqual(['policy_denied']);
    expect(skipsOf(entries)).toEqual(['d1:human']);
    expect(types(entries, 'TASK_COMPLETED').map((d) => d.taskId)).toEqual(['d2', 'q1']);
    expect(result.reason).toBe('failed');
    expect(result.message).toContain('task d1 was skipped by a human');
  });

  it('a failing QA task mid-plan holds its successors until the fix loop ran; downstream tasks still run', async () => {
    const { result, entries } = await runPlanInProcess({
      tasks: [
        { id: 'd1', capability: 'dev.implement', breaks: true },
        { id: 'q1', capability: 'qa.verify' },
        { id: 'd2', capability: 'dev.implement' },
        { id: 'q2', capability: 'qa.verify' },
      ],
      edges: [{ from: 'd1', to: 'q1' }, { from: 'q1', to: 'd2' }, { from: 'd2', to: 'q2' }],
      joins: [],
    });
    expect(skipsOf(entries)).toEqual([]);
    expect(types(entries, 'TASK_COMPLETED').map((d) => d.taskId)).toEqual(['d1', 'q1-fix1', 'q1-r1', 'd2', 'q2']);
    expect(result.reason, result.message).toBe('succeeded');
  });

  it('test-first: failing tests from qa.write_tests go through the fix loop, then the plan goes on', async () => {
    const { result, entries } = await runPlanInProcess({
      tasks: [
        { id: 'w1', capability: 'qa.write_tests', breaks: true },
        { id: 'd1', capability: 'dev.implement' },
        { id: 'q1', capability: 'qa.verify' },
      ],
      edges: [{ from: 'w1', to: 'd1' }, { from: 'd1', to: 'q1' }],
      joins: [],
    });
    expect(types(entries, 'MERGE').map((d) => d.taskId)[0]).toBe('w1');
    expect(types(entries, 'TASK_ADDED').map((d) => (d.task as { id: string; capability: string }).capability)).toEqual(['dev.fix', 'qa.verify']);
    expect(types(entries, 'TASK_COMPLETED').map((d) => d.taskId)).toEqual(['w1-fix1', 'w1-r1', 'd1', 'q1']);
    expect(result.reason, result.message).toBe('succeeded');
  });
});

describe('QA gates', () => {
  it('verification expressions on QA tasks are evaluated and recorded; a false one fails the run', async () => {
    const ok = await runPlanInProcess({
      tasks: [{ id: 'd1', capability: 'dev.implement' }, { id: 'q1', capability: 'qa.verify', verification: ['$q1.passedCount >= 3'] }],
      edges: [{ from: 'd1', to: 'q1' }],
      joins: [],
    });
    expect(ok.result.reason).toBe('succeeded');
    expect(types(ok.entries, 'VERIFICATION')).toContainEqual(expect.objectContaining({ taskId: 'q1', source: 'check', command: '$q1.passedCount >= 3', passed: true }));
    const bad = await runPlanInProcess({
      tasks: [{ id: 'd1', capability: 'dev.implement' }, { id: 'q1', capability: 'qa.verify', verification: ['$q1.passedCount > 10'], attempts: 2 }],
      edges: [{ from: 'd1', to: 'q1' }],
      joins: [],
    });
    expect(bad.result.reason).not.toBe('succeeded');
    expect(types(bad.entries, 'RETRY_SCHEDULED')).toContainEqual(expect.objectContaining({ taskId: 'q1', reason: 'verification $q1.passedCount > 10 is false' }));
    expect(types(bad.entries, 'VERIFICATION').filter((v) => v.source === 'check' && v.passed === false).length).toBeGreaterThanOrEqual(2);
  });

  it('QA changes to protected paths are denied by task.post, undone and routed like a dev task', async () => {
    const { result, entries } = await runPlanInProcess({
      tasks: [{ id: 'd1', capability: 'dev.implement' }, { id: 'w1', capability: 'qa.write_tests', touchesProtected: true }],
      edges: [{ from: 'd1', to: 'w1' }],
      joins: [],
    });
    const post = types(entries, 'POLICY_DECISION').filter((d) => d.hook === 'task.post' && d.taskId === 'w1');
    expect(post.map((d) => d.response)).toEqual([{ allow: false, reason: 'changed protected path secret/test.txt' }]);
    expect(types(entries, 'COMPENSATION_APPLIED')).toContainEqual(expect.objectContaining({ taskId: 'w1' }));
    expect(types(entries, 'MERGE').map((d) => d.taskId)).toEqual(['d1']);
    expect(types(entries, 'ESCALATION_REQUESTED').map((d) => d.reason)).toEqual(['policy_denied']);
    expect(result.reason).toBe('awaiting_human');
  });
});

describe('guards over recorded policy', () => {
  it('`!policy.allow` follows the recorded task.post denial a human overrode', async () => {
    const { result, entries } = await runPlanInProcess(
      {
        tasks: [
          { id: 'd1', capability: 'dev.implement', touchesProtected: true },
          { id: 'fast', capability: 'dev.implement' },
          { id: 'review', capability: 'dev.implement' },
        ],
        edges: [{ from: 'd1', to: 'fast', guard: 'policy.allow' }, { from: 'd1', to: 'review', guard: '!policy.allow' }],
        joins: [],
      },
      { human: scriptedHuman([{ action: 'approve' }]) },
    );
    const branches = types(entries, 'BRANCH_TAKEN');
    expect(branches).toContainEqual(expect.objectContaining({ to: 'fast', value: false, policy: { allow: false, reason: 'changed protected path secret/key.txt' } }));
    expect(branches).toContainEqual(expect.objectContaining({ to: 'review', value: true }));
    expect(skipsOf(entries)).toEqual(['fast:guard']);
    expect(result.reason, result.message).toBe('succeeded');
  });
});

describe('goal amendments', () => {
  it('human guidance is recorded as GOAL_AMENDED after the answer', async () => {
    const { result, entries } = await runPlanInProcess(
      { tasks: [{ id: 'd1', capability: 'dev.implement', touchesProtected: true }], edges: [], joins: [] },
      { human: scriptedHuman([{ action: 'guidance', text: 'keep secrets out of the change' }]) },
    );
    const i = entries.findIndex((e) => e.type === 'HUMAN_RESPONSE');
    expect(entries[i + 1]).toMatchObject({ type: 'GOAL_AMENDED', actor: 'human', data: { by: 'human', delta: 'guidance for d1: keep secrets out of the change' } });
    expect(result.reason).toBe('awaiting_human');
  });
});
