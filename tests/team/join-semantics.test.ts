// Join semantics (ACM v0.5 §6.2; audit A4): 'any' runs the join after the first branch taken; 'all' (also a
// fan-in with no join) needs every branch. When a guard closes one branch of an 'all' join while another
// was taken, the join cannot be met: it is recorded as a join skip and the run cannot end `succeeded`.
import { describe, expect, it } from 'vitest';
import type { Join } from '../../src/core/acm/contracts.js';
import { runPlanInProcess, type GeneratedPlan } from './inprocess.js';

const diamond = (joins: Join[]): GeneratedPlan => ({
  tasks: [{ id: 't0', capability: 'dev.implement', ok: true }, { id: 'a', capability: 'dev.implement' }, { id: 'b', capability: 'dev.implement' }, { id: 'j', capability: 'dev.implement' }],
  edges: [
    { from: 't0', to: 'a', guard: '$t0.ok == true' },
    { from: 't0', to: 'b', guard: '$t0.ok != true' },
    { from: 'a', to: 'j' },
    { from: 'b', to: 'j' },
  ],
  joins,
});
const skips = (entries: readonly { type: string; data: unknown }[]) => entries.filter((e) => e.type === 'TASK_SKIPPED').map((e) => e.data as { taskId: string; cause: string });

describe('joins over guarded branches', () => {
  it("'all' over a branch its guard closed: the join is not run, and the run fails naming it", async () => {
    for (const joins of [[{ task: 'j', mode: 'all', waitFor: ['a', 'b'] }], []] as Join[][]) {
      const { result, entries } = await runPlanInProcess(diamond(joins));
      expect(skips(entries)).toEqual([expect.objectContaining({ taskId: 'b', cause: 'guard' }), expect.objectContaining({ taskId: 'j', cause: 'join' })]);
      expect(result.reason).toBe('failed');
      expect(result.message).toContain('task j was not run: it joins all of its branches');
    }
  });

  it("'any' runs the join after the branch that was taken, and the run succeeds", async () => {
    const { result, entries } = await runPlanInProcess(diamond([{ task: 'j', mode: 'any', waitFor: ['a', 'b'] }]));
    expect(skips(entries)).toEqual([expect.objectContaining({ taskId: 'b', cause: 'guard' })]);
    expect(entries.some((e) => e.type === 'TASK_COMPLETED' && (e.data as { taskId: string }).taskId === 'j')).toBe(true);
    expect(result.reason).toBe('succeeded');
  });
});
