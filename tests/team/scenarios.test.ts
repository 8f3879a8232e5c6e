// The demo scenarios' team logic in-process (tests/team/team-rig.ts): the scenario's own script and
// settings, real git, the real test command, the file ledger (so replay reads what was recorded). They
// were `acia demo` runs through the built CLI; tests/e2e/scenarios.test.ts keeps the demo path itself
// (happy) and the escalate -> resume --answer path.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { testsPassOn } from '../e2e/helpers.js';
import { ofType, replaysIdentically, scenario, teamRig } from './team-rig.js';

function run(name: string) {
  const rig = teamRig({ ledger: 'file' });
  const s = scenario(name, rig.dir);
  return { rig, expected: s.expect, outcome: rig.start({ goal: s.goal }, s.session) };
}

describe('demo scenarios, in-process (were tests/e2e/scenarios.test.ts)', () => {
  it('fix-loop: a failing verdict from the real exit code adds a dev.fix task, then passes', async () => {
    const { rig, expected, outcome } = run('fix-loop');
    const { exitCode, result, entries } = await outcome;
    expect(exitCode, result.message).toBe(expected.exitCode);
    const verdicts = ofType(entries, 'VERIFICATION').filter((v) => v.source !== 'check');
    expect(verdicts).toEqual([expect.objectContaining({ taskId: 't2', passed: false }), expect.objectContaining({ taskId: 't2-r1', passed: true })]);
    // the QA agent claimed a pass on the failing run; the ledger shows the claim did not count
    expect(ofType(entries, 'TASK_FAILED').some((d) => String(d.message).includes('claimed a pass'))).toBe(true);
    const added = ofType(entries, 'TASK_ADDED').map((d) => d.task);
    expect(added).toEqual([expect.objectContaining({ id: 't2-fix1', capability: 'dev.fix' }), expect.objectContaining({ id: 't2-r1', capability: 'qa.verify' })]);
    // the fixer's lesson reaches the team's memory
    expect(readFileSync(join(rig.repo, '.acia', 'wiki', 'memory', 'lessons.md'), 'utf8')).toMatch(/^> - Word helpers must handle every word .* _\(t2-fix1, run \S+, ledger seq \d+\)_$/m);
    expect(testsPassOn(rig.repo, result.runBranch)).toBe(true);
    expect(await replaysIdentically(rig.repo, result.runId)).toBe(true);
  });

  it('plan-b: Plan-A fails verification, the team re-plans to Plan-B, which passes', async () => {
    const { rig, expected, outcome } = run('plan-b');
    const { exitCode, result, entries } = await outcome;
    expect(exitCode, result.message).toBe(expected.exitCode);
    // Cause, scope and a diff summary (ACM v0.5 §6.1, audit P3), and the selection before it with its rationale.
    expect(ofType(entries, 'REPLAN_TRIGGERED')[0]).toMatchObject({ fromPlanId: 'plan-A', toPlanId: 'plan-B', cause: expect.stringContaining('verification') as unknown, scope: 'whole plan', diff: expect.stringContaining('2 task(s) dropped, 2 added') as unknown });
    expect(ofType(entries, 'PLAN_SELECTED')[0]).toMatchObject({ planId: 'plan-A', method: 'llm', rationale: expect.stringMatching(/\S/) as unknown, alternatives: ['plan-B'] });
    expect(ofType(entries, 'TASK_COMPLETED').some((d) => d.taskId === 'b2')).toBe(true);
    expect(testsPassOn(rig.repo, result.runBranch)).toBe(true);
    expect(await replaysIdentically(rig.repo, result.runId)).toBe(true);
  });

  it('budget: stops before the model call that would pass the token budget, exit 4', async () => {
    const { expected, outcome } = run('budget');
    const { exitCode, result, entries } = await outcome;
    expect(exitCode, result.message).toBe(4);
    expect(expected.reason).toBe('budget_exhausted');
    const breach = ofType(entries, 'BUDGET_EXCEEDED')[0] as { limit: string; spent: number; max: number };
    expect(breach.limit).toBe('tokens');
    expect(breach.spent).toBeGreaterThan(breach.max);
    const recordedTokens = ofType(entries, 'LLM_CALL').reduce((n, d) => {
      const u = d.usage as Record<string, number>;
      return n + u.inputTokens! + u.outputTokens! + u.cacheReadTokens! + u.cacheWriteTokens!;
    }, 0);
    expect(recordedTokens).toBeLessThanOrEqual(breach.max);
    expect(result.reason).toBe('budget_exhausted');
  });

  it('parallel: four dev tasks in separate worktrees merge into one branch and pass', async () => {
    const { rig, expected, outcome } = run('parallel');
    const { exitCode, result, entries } = await outcome;
    expect(exitCode, result.message).toBe(expected.exitCode);
    expect(ofType(entries, 'MERGE').map((d) => d.taskId as string).sort()).toEqual(['t1', 't2', 't3', 't4']);
    // tasks overlapped: all four started before the first one completed
    const firstDone = entries.findIndex((e) => e.type === 'TASK_COMPLETED');
    expect(entries.slice(0, firstDone).filter((e) => e.type === 'TASK_STARTED').length).toBeGreaterThanOrEqual(4);
    expect(testsPassOn(rig.repo, result.runBranch)).toBe(true);
    expect(await replaysIdentically(rig.repo, result.runId)).toBe(true);
  });
});
