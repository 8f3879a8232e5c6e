// `acia exec` checks a saved plan against the run's own Context Packet before any task starts (audit A2):
// a guard over a fact the packet does not have is refused, not read as null at run time.
import { describe, expect, it } from 'vitest';
import { ofType, savedPlanSet, teamRig } from './team-rig.js';

describe('a saved plan checked against the run packet', () => {
  it("refuses a guard over a fact the run's packet does not have; no task starts", async () => {
    const rig = teamRig();
    const planSet = savedPlanSet([{ id: 't1', capability: 'dev.implement' }, { id: 't2', capability: 'dev.implement' }], [{ from: 't1', to: 't2', guard: '!context.facts.noSuchFact' }]);
    const { exitCode, entries, result } = await rig.start({ goal: 'execute the saved plan', planSet, rebindContext: true }, { script: [] });
    expect(exitCode, result.message).toBe(1);
    expect(result.message).toContain("the fact 'noSuchFact'");
    expect(ofType(entries, 'TASK_STARTED')).toEqual([]);
  });
});
