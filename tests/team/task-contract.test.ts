// What a Task Spec declares beyond its capability (ACM v0.5 §5.5, §6.4; audit T6/T8): the compensation it
// names becomes a task of the plan graph when it fails so, and its retryPolicy (the spec's backoffSeconds
// and retryOn) decides which failures are retried and how long each wait is.
import { describe, expect, it } from 'vitest';
import { lastCompleted, ofType, savedPlanSet, teamRig, writes } from './team-rig.js';

describe('a Task Spec contract', () => {
  it('a declared compensation runs as a task of the plan, wired by an error edge, when the task fails with a kind it names', async () => {
    const rig = teamRig({ config: { protectedPaths: ['src/'] } });
    const planSet = savedPlanSet([{ id: 't1', capability: 'dev.implement', compensation: { capability: 'dev.implement', input: { instructions: 'record that t1 was undone' } } }], []);
    const script = [...writes('dev:t1', 'src/x.js', 'export const x = 1;\n'), ...writes('dev:t1-comp', 'docs/undone.md', 't1 undone\n')];
    const { entries } = await rig.start({ goal: 'execute the saved plan', planSet, rebindContext: true }, { script });
    expect(ofType(entries, 'TASK_FAILED')).toEqual([expect.objectContaining({ taskId: 't1', errorKind: 'COMPENSATION_REQUIRED' })]);
    expect(ofType(entries, 'TASK_ADDED')).toEqual([expect.objectContaining({ reason: 'compensation', parent: 't1', task: expect.objectContaining({ id: 't1-comp', capability: 'dev.implement' }) as unknown, edges: [{ from: 't1', to: 't1-comp', onError: 'COMPENSATION_REQUIRED' }] })]);
    expect(ofType(entries, 'BRANCH_TAKEN')).toEqual([expect.objectContaining({ from: 't1', to: 't1-comp', onError: 'COMPENSATION_REQUIRED' })]);
    expect(ofType(entries, 'TASK_COMPLETED').map((d) => d.taskId)).toEqual(['t1-comp']);
    expect(ofType(entries, 'ESCALATION_REQUESTED')).toEqual([]);
    // The task itself failed: a compensated run is no success.
    expect(lastCompleted(entries).reason).toBe('failed');
  });

  it("retryPolicy: backoffSeconds are the waits recorded; a kind retryOn does not name is not retried", async () => {
    const rig = teamRig();
    const failing = (id: string, retry: Record<string, unknown>) => ({ id, capability: 'dev.implement', verification: [`$${id}.filesChanged > 5`], retry });
    const planSet = savedPlanSet([failing('a', { attempts: 3, delaysMs: [5000, 15000], retryOn: ['FATAL_ERROR'] }), failing('b', { attempts: 3, retryOn: ['RETRYABLE_ERROR'] })], []);
    const script = [...writes('dev:a', 'docs/a1.md', '1\n'), ...writes('dev:a', 'docs/a2.md', '2\n'), ...writes('dev:a', 'docs/a3.md', '3\n'), ...writes('dev:b', 'docs/b.md', 'b\n')];
    const { entries } = await rig.start({ goal: 'execute the saved plan', planSet, rebindContext: true }, { script });
    expect(ofType(entries, 'RETRY_SCHEDULED').map((d) => [d.taskId, d.attempt, d.delayMs])).toEqual([
      ['a', 2, 5000],
      ['a', 3, 15000],
    ]);
    expect(ofType(entries, 'TASK_FAILED').map((d) => [d.taskId, d.attempt]).sort()).toEqual([
      ['a', 3],
      ['b', 1],
    ]);
  });
});
