// Idempotency by idemKey (ACM v0.5 §6.3 step 3; audit T2, adversarial plan A6): two tasks with the same
// key do the work once; the second reuses the first's recorded result and the ledger says so.
import { describe, expect, it } from 'vitest';
import { lastCompleted, ofType, savedPlanSet, teamRig, writes } from './team-rig.js';

describe('idempotency by idemKey', () => {
  for (const parallel of [1, 2]) {
    it(`the second task with the same key runs nothing and commits nothing; it reuses the first's result (--parallel ${parallel})`, async () => {
      const rig = teamRig();
      const planSet = savedPlanSet(
        [
          { id: 't1', capability: 'dev.implement', idemKey: 'refund-O123' },
          { id: 't2', capability: 'dev.implement', idemKey: 'refund-O123' },
          { id: 't3', capability: 'dev.implement', idemKey: 'refund-${task.id}' },
        ],
        [],
      );
      // Only t1 and t3 have turns: had t2 called the model, the script would have run out.
      const script = [...writes('dev:t1', 'docs/a.md', 'refund\n'), ...writes('dev:t3', 'docs/c.md', 'other\n')];
      const { exitCode, entries, result } = await rig.start({ goal: 'execute the saved plan', planSet, rebindContext: true }, { script, flags: { parallel } });
      expect(exitCode, result.message).toBe(0);
      expect(lastCompleted(entries).reason).toBe('succeeded');
      expect(ofType(entries, 'CHECKPOINT').map((d) => d.taskId).sort()).toEqual(['t1', 't3']);
      expect(ofType(entries, 'MERGE').map((d) => d.taskId).sort()).toEqual(['t1', 't3']);
      expect(ofType(entries, 'LLM_CALL').some((d) => d.caller === 'dev:t2')).toBe(false);
      const t1 = ofType(entries, 'TASK_COMPLETED').find((d) => d.taskId === 't1')!;
      const t2 = ofType(entries, 'TASK_COMPLETED').find((d) => d.taskId === 't2')!;
      expect(t2).toMatchObject({ reusedFrom: 't1', idemKey: 'refund-O123', output: t1.output });
      expect(ofType(entries, 'TASK_COMPLETED').find((d) => d.taskId === 't3')?.reusedFrom).toBeUndefined();
      // Policy still surrounds the reused task.
      expect(ofType(entries, 'POLICY_DECISION').filter((d) => d.taskId === 't2').map((d) => d.hook)).toEqual(['task.pre', 'task.post']);
    });
  }
});
