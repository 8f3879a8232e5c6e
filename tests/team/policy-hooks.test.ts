// The policy decision point around every task (ACM 002 §14.1, v0.5 §6.3, audit Y1/Y2/Y4/B4): each kind of
// task — dev, QA that changes no file, human.approve, pm.replan — exposes the same PDP input and gets a
// task.pre and a task.post; denials and FATAL failures follow the plan's typed edges when it has them.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { PolicyDecision, PolicyEngine, PolicyRequest } from '../../src/core/policy/policy.js';
import { DefaultPolicy } from '../../src/core/policy/policy.js';
import { lastCompleted, ofType, runsTests, savedPlanSet, teamRig, writes } from './team-rig.js';

/** The PDP input of 002 §14.1, exactly: any key added or dropped, or a wrong type, fails. */
const TaskRequest = z.strictObject({
  action: z.enum(['task.pre', 'task.post']),
  task: z.strictObject({
    id: z.string().min(1),
    capability: z.string().min(1),
    input: z.record(z.string(), z.unknown()),
    idemKey: z.string().min(1),
    policyInput: z.record(z.string(), z.unknown()).optional(),
  }),
  goal: z.strictObject({ id: z.string().min(1) }),
  plan: z.strictObject({ id: z.literal('plan-A'), contextRef: z.string().regex(/^sha256:[0-9a-f]{64}$/), capabilityMapVersion: z.literal('acia-caps@1'), taskCount: z.number().int().positive() }),
  run: z.strictObject({ engine: z.literal('acia'), runId: z.string().min(1) }),
  metrics: z.strictObject({ costUsd: z.number(), elapsedSec: z.number(), cost_usd: z.number(), elapsed_sec: z.number() }),
  filesChanged: z.array(z.string()).optional(),
});

describe('policy around every task', () => {
  it('dev, QA with no changed file, human.approve and pm.replan each get task.pre and task.post with the same PDP input', async () => {
    const rig = teamRig();
    const planSet = savedPlanSet(
      [
        { id: 't1', capability: 'dev.implement', idemKey: '${goal.id}-${task.id}-${context.facts.testCommand}' },
        { id: 'q', capability: 'qa.verify', policyInput: { risk: 'low' } },
        { id: 'h', capability: 'human.approve', input: { question: 'ship it?' } },
        { id: 'r', capability: 'pm.replan', input: {} },
      ],
      [{ from: 't1', to: 'q' }, { from: 'q', to: 'h' }, { from: 'h', to: 'r' }],
    );
    const script = [...writes('dev:t1', 'docs/t1.md', 'one\n'), ...runsTests('qa:q')];
    const first = await rig.start({ goal: 'execute the saved plan', planSet, rebindContext: true }, { script });
    expect(first.exitCode, first.result.message).toBe(3);
    const { exitCode, entries, result } = await rig.resume(first.result.runId, 'approve', { script: [] });
    expect(exitCode, result.message).toBe(0);

    const decisions = ofType(entries, 'POLICY_DECISION').filter((d) => d.hook !== 'plan.admit');
    const hooks = (id: string) => decisions.filter((d) => d.taskId === id).map((d) => d.hook);
    for (const id of ['t1', 'q', 'h', 'r']) expect(hooks(id), id).toEqual(['task.pre', 'task.post']);
    for (const d of decisions) {
      const parsed = TaskRequest.safeParse(d.request);
      expect(parsed.success, `${String(d.taskId)} ${String(d.hook)}: ${parsed.error?.message ?? ''}`).toBe(true);
      const request = d.request as PolicyRequest;
      expect(request.action).toBe(d.hook);
      expect(request.task?.id).toBe(d.taskId);
      // task.post names what the task changed, also when that is nothing.
      expect(request.filesChanged === undefined).toBe(d.hook === 'task.pre');
    }
    const post = (id: string) => decisions.find((d) => d.taskId === id && d.hook === 'task.post')!.request as PolicyRequest;
    expect(post('t1').filesChanged).toEqual(['docs/t1.md']);
    expect(post('q').filesChanged).toEqual([]);
    // A declared key resolves over the run; an undeclared one is unique to the task in its plan.
    const goalId = (decisions[0]!.request as PolicyRequest).goal.id;
    expect(post('t1').task?.idemKey).toBe(`${goalId}-t1-node run-tests.js`);
    expect(post('q').task?.idemKey).toBe(`${goalId}/plan-A/q`);
    expect(post('q').task?.policyInput).toEqual({ risk: 'low' });
    expect(ofType(entries, 'TASK_COMPLETED').map((d) => [d.taskId, d.output])).toEqual([
      ['t1', expect.anything()],
      ['q', expect.anything()],
      ['h', { approved: true }],
      ['r', { replanned: false }],
    ]);
  });

  it("a task.pre deny follows the plan's FATAL_ERROR edge instead of asking a human; allow limits cap retries", async () => {
    const seen: PolicyRequest[] = [];
    const policy: PolicyEngine = {
      evaluate(request): Promise<PolicyDecision> {
        seen.push(request);
        if (request.action === 'task.pre' && request.task?.id === 't1') return Promise.resolve({ allow: false, reason: 'not today' });
        if (request.action === 'task.pre') return Promise.resolve({ allow: true, limits: { retries: 0, timeoutMs: 60_000 } });
        return new DefaultPolicy({ protectedPaths: [], maxTasksPerPlan: 40 }).evaluate(request);
      },
    };
    const rig = teamRig({ policy });
    const planSet = savedPlanSet(
      [{ id: 't1', capability: 'dev.implement' }, { id: 'alt', capability: 'dev.implement', verification: ['$alt.filesChanged > 5'], retry: { attempts: 3 } }],
      [{ from: 't1', to: 'alt', onError: 'FATAL_ERROR' }],
    );
    const script = writes('dev:alt', 'docs/alt.md', 'alt\n');
    const { entries } = await rig.start({ goal: 'execute the saved plan', planSet, rebindContext: true }, { script });
    expect(ofType(entries, 'TASK_FAILED')[0]).toMatchObject({ taskId: 't1', errorKind: 'FATAL_ERROR', message: expect.stringContaining('not today') as unknown });
    expect(ofType(entries, 'BRANCH_TAKEN')).toContainEqual(expect.objectContaining({ from: 't1', to: 'alt', onError: 'FATAL_ERROR' }));
    expect(ofType(entries, 'ESCALATION_REQUESTED').filter((e) => e.taskId === 't1')).toEqual([]);
    // The allow granted alt no retry: its false expression fails it after one attempt, not three.
    expect(ofType(entries, 'POLICY_DECISION').find((d) => d.taskId === 'alt')?.response).toEqual({ allow: true, limits: { retries: 0, timeoutMs: 60_000 } });
    expect(ofType(entries, 'TASK_STARTED').filter((d) => d.taskId === 'alt')).toHaveLength(1);
    expect(ofType(entries, 'TASK_FAILED').find((d) => d.taskId === 'alt')).toMatchObject({ attempt: 1, errorKind: 'FATAL_ERROR' });
    expect(lastCompleted(entries).reason).not.toBe('succeeded');
  });
});

describe('typed error edges for every FATAL failure (B4)', () => {
  it("a looping agent's FATAL_ERROR follows the plan's FATAL_ERROR edge; no human is asked", async () => {
    const rig = teamRig();
    const planSet = savedPlanSet([{ id: 't1', capability: 'dev.implement' }, { id: 'alt', capability: 'dev.implement' }], [{ from: 't1', to: 'alt', onError: 'FATAL_ERROR' }]);
    const loop = Array.from({ length: 6 }, () => ({ caller: 'dev:t1', toolCalls: [{ name: 'read_file', input: { path: 'README.md' } }] }));
    const { entries } = await rig.start({ goal: 'execute the saved plan', planSet, rebindContext: true }, { script: [...loop, ...writes('dev:alt', 'docs/alt.md', 'alt\n')] });
    expect(ofType(entries, 'TASK_FAILED')[0]).toMatchObject({ taskId: 't1', errorKind: 'FATAL_ERROR', message: expect.stringContaining('loop detected') as unknown });
    expect(ofType(entries, 'BRANCH_TAKEN')).toEqual([expect.objectContaining({ from: 't1', to: 'alt', onError: 'FATAL_ERROR', value: true })]);
    expect(ofType(entries, 'ESCALATION_REQUESTED')).toEqual([]);
    expect(ofType(entries, 'TASK_COMPLETED').map((d) => d.taskId)).toEqual(['alt']);
  });

  it("a broken environment (the test command cannot start) follows the plan's FATAL_ERROR edge", async () => {
    const rig = teamRig();
    const planSet = savedPlanSet([{ id: 'q', capability: 'qa.verify' }, { id: 'alt', capability: 'dev.implement' }], [{ from: 'q', to: 'alt', onError: 'FATAL_ERROR' }]);
    const { entries } = await rig.start(
      { goal: 'execute the saved plan', planSet, rebindContext: true },
      { script: [...runsTests('qa:q'), ...writes('dev:alt', 'docs/alt.md', 'alt\n')], flags: { testCommand: 'no-such-test-runner-acia' } },
    );
    expect(ofType(entries, 'TASK_FAILED')[0]).toMatchObject({ taskId: 'q', errorKind: 'FATAL_ERROR', message: expect.stringContaining('could not run') as unknown });
    expect(ofType(entries, 'BRANCH_TAKEN')).toContainEqual(expect.objectContaining({ from: 'q', to: 'alt', onError: 'FATAL_ERROR' }));
    expect(ofType(entries, 'ESCALATION_REQUESTED').filter((e) => e.taskId === 'q')).toEqual([]);
  });
});
