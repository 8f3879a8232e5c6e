// The user's hooks at the team's points, through the real team in-process (tests/team/team-rig.ts): what a
// denial does at each gate, that a completion gate's feedback is bounded, and that a run resumed after a
// hook's escalation replays identically. The CLI, the sandbox and real hook scripts: tests/e2e/hooks.test.ts.
import { describe, expect, it } from 'vitest';
import { lastCompleted, ofType, replaysIdentically, runsTests, savedPlanSet, teamRig, writes } from './team-rig.js';

const plan = (retry?: { attempts: number }) =>
  savedPlanSet([{ id: 't1', capability: 'dev.implement', ...(retry ? { retry } : {}) }, { id: 't2', capability: 'qa.verify' }], [{ from: 't1', to: 't2' }]);
const start = { goal: 'execute the saved plan', planSet: plan(), rebindContext: true };
const hookDecisions = (entries: Parameters<typeof ofType>[0], name: string) =>
  ofType(entries, 'POLICY_DECISION').filter((d) => (d.by as { name?: string } | undefined)?.name === name) as { hook: string; taskId?: string; response: Record<string, unknown> }[];

describe('user hooks in a run', () => {
  it('a task.created denial keeps the task from starting until a human approves; the resumed run replays identically', async () => {
    const rig = teamRig({ ledger: 'file' });
    const hooks = [
      { name: 'no-qa', on: 'task.created', kind: 'qa.*', command: 'echo "QA is frozen this week" >&2; exit 2' },
      { name: 'ping', on: 'escalation', command: 'cat > /dev/null' },
    ];
    const first = await rig.start(start, { script: writes('dev:t1', 'src/a.js', 'export const a = 1;\n'), flags: { hooks } });
    expect(first.exitCode).toBe(3);
    expect(hookDecisions(first.entries, 'no-qa')).toEqual([expect.objectContaining({ hook: 'task.created', taskId: 't2', response: expect.objectContaining({ allow: false, reason: 'QA is frozen this week' }) as unknown })]);
    expect(ofType(first.entries, 'ESCALATION_REQUESTED')).toEqual([expect.objectContaining({ reason: 'policy_denied', taskId: 't2', message: 'policy denied t2: QA is frozen this week' })]);
    expect(hookDecisions(first.entries, 'ping')).toEqual([expect.objectContaining({ hook: 'escalation', taskId: 't2', response: { allow: true } })]);
    expect(ofType(first.entries, 'LLM_CALL').some((c) => c.caller === 'qa:t2')).toBe(false);

    const runId = first.result.runId;
    const second = await rig.resume(runId, 'approve', { script: runsTests('qa:t2'), flags: { hooks } });
    expect(second.exitCode, second.result.message).toBe(0);
    // Announced once: the resumed session does not run the task.created hooks again.
    expect(hookDecisions(second.entries, 'no-qa')).toHaveLength(1);
    expect(await replaysIdentically(rig.repo, runId)).toBe(true);
  });

  it('a task.merge denial undoes the change and asks a human; nothing is merged', async () => {
    const rig = teamRig();
    const hooks = [{ name: 'scanner', on: 'task.merge', paths: 'src/**', command: 'jq -r ".files_changed[]" >&2; exit 2' }];
    const { exitCode, entries } = await rig.start(start, { script: writes('dev:t1', 'src/a.js', 'export const a = 1;\n'), flags: { hooks } });
    expect(exitCode).toBe(3);
    expect(hookDecisions(entries, 'scanner')).toEqual([expect.objectContaining({ hook: 'task.merge', taskId: 't1', response: expect.objectContaining({ allow: false, reason: 'src/a.js' }) as unknown })]);
    expect(ofType(entries, 'MERGE')).toEqual([]);
    expect(ofType(entries, 'COMPENSATION_APPLIED')).toEqual([expect.objectContaining({ taskId: 't1', reason: 'policy: hook scanner: src/a.js' })]);
    expect(ofType(entries, 'TASK_FAILED')).toEqual([expect.objectContaining({ taskId: 't1', errorKind: 'COMPENSATION_REQUIRED' })]);
    expect(ofType(entries, 'ESCALATION_REQUESTED')).toEqual([expect.objectContaining({ reason: 'policy_denied', taskId: 't1' })]);
  });

  it('a completion gate that never passes ends the attempt after the loop\'s repairs; continue:false ends it at once', async () => {
    const rig = teamRig();
    const never = [{ name: 'never', on: 'task.post', kind: 'dev.*', command: 'echo "still failing" >&2; exit 2' }];
    const returns = (n: number) => Array.from({ length: n }, () => ({ caller: 'dev:t1', toolCalls: [{ name: 'return_result', input: { summary: 'done' } }] }));
    const bounded = await rig.start({ ...start, planSet: plan({ attempts: 1 }) }, { script: [{ caller: 'dev:t1', toolCalls: [{ name: 'write_file', input: { path: 'src/a.js', content: '1\n' } }] }, ...returns(4)], flags: { hooks: never } });
    expect(bounded.exitCode).toBe(3);
    expect(hookDecisions(bounded.entries, 'never').map((d) => d.response.feedback)).toEqual([true, true, true, true]);
    expect(ofType(bounded.entries, 'TASK_FAILED')).toEqual([expect.objectContaining({ taskId: 't1', errorKind: 'RETRYABLE_ERROR', message: expect.stringContaining('result still invalid after 3 repairs: the hook never did not accept it: still failing') as unknown })]);
    expect(ofType(bounded.entries, 'MERGE')).toEqual([]);

    const stop = [{ name: 'stop', on: 'TaskCompleted', command: `echo '{"continue": false, "stopReason": "the release is frozen"}'` }];
    const stopped = await rig.start(start, { script: writes('dev:t1', 'src/a.js', 'export const a = 1;\n'), flags: { hooks: stop } });
    expect(stopped.exitCode).toBe(3);
    expect(hookDecisions(stopped.entries, 'stop')).toEqual([expect.objectContaining({ hook: 'task.post', response: { allow: false, stop: true, reason: 'the release is frozen' } })]);
    expect(ofType(stopped.entries, 'TASK_FAILED')).toEqual([expect.objectContaining({ taskId: 't1', errorKind: 'COMPENSATION_REQUIRED', message: 'policy denied the change: hook stop: the release is frozen' })]);
    expect(ofType(stopped.entries, 'MERGE')).toEqual([]);
    expect(lastCompleted(stopped.entries).reason).toBe('awaiting_human');
  });
  it('a path guard sees through .. and links: such writes are blocked as infra/ is', async () => {
    const rig = teamRig();
    const hooks = [{ name: 'no-infra', on: 'tool.pre', tool: ['write_file', 'edit_file'], paths: 'infra/**', command: 'echo "infra/ is not yours" >&2; exit 2' }];
    const dev = (name: string, input: unknown) => ({ caller: 'dev:t1', toolCalls: [{ name, input }] });
    const script = [
      dev('run_command', { command: 'ln -s infra ops' }),
      dev('write_file', { path: 'ops/main.tf', content: 'a\n' }),
      dev('write_file', { path: 'src/../infra/main.tf', content: 'b\n' }),
      dev('write_file', { path: 'src/ok.js', content: 'export const ok = 1;\n' }),
      dev('return_result', { summary: 'done' }),
    ];
    const { entries } = await rig.start({ goal: 'one change', planSet: savedPlanSet([{ id: 't1', capability: 'dev.implement' }], []), rebindContext: true }, { script, flags: { hooks } });
    expect(hookDecisions(entries, 'no-infra').map((d) => [d.hook, d.response.allow, d.response.reason])).toEqual([
      ['tool.pre', false, 'infra/ is not yours'],
      ['tool.pre', false, 'infra/ is not yours'],
    ]);
    const written = ofType(entries, 'TOOL_RESULT').filter((r) => r.name === 'write_file').map((r) => (r.data as { blockedBy?: string } | undefined)?.blockedBy ?? 'written');
    expect(written).toEqual(['no-infra', 'no-infra', 'written']);
  });
});
