// Directing a running team through the built CLI: the plan approval gate answered with --answer (an
// invalid edit refused with the validator's message and nothing recorded, a valid edit, a rejection the
// PM plans again from, a switch to the other plan), and `acia say` messages reaching a scripted Dev agent
// (its request carries them) in each mode; a finished run refuses a message; the replay of a run with a
// message is identical.
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acia, ledgerOf, onlyRunId, tempDir } from './helpers.js';
import { editedScript, expectCleanError, sampleRepo, startAcia } from './cli-helpers.js';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { hasScript, onTty } from './tty-helpers.js';
import { recordedRequest } from '../helpers/recorded-request.js';

const GOAL = 'Add a titleCase(text) helper that capitalises every word, with a test';
const flags = (script: string) => ['--model', `scripted:${script}`, '--test-command', 'node run-tests.js', '--sandbox', 'off'];

/** The model-visible requests of `caller`, in order, as the ledger stored them. */
function requestsOf(repo: string, runId: string, caller: string): string[] {
  return ledgerOf(repo, runId)
    .filter((e): e is LedgerEntry & { data: { caller: string; requestHash: string } } => e.type === 'LLM_CALL' && (e.data as { caller: string }).caller === caller)
    .map((e) => recordedRequest(repo, runId, e.data.requestHash));
}

const types = (repo: string, runId: string) => ledgerOf(repo, runId).map((e) => e.type);

describe('directing the team', () => {
  it('approval gate with --answer: an invalid edit is refused, a valid edit runs; queued and steered messages reach the Dev agent', () => {
    const repo = sampleRepo('direct-edit');
    const script = editedScript('happy', (turns) => turns.forEach((t) => (t.latencyMs = 0)));
    const first = acia(['run', GOAL, '--repo', repo, '--approve-plan', ...flags(script)]);
    expect(first.code, first.stderr).toBe(3);
    const runId = onlyRunId(repo);
    expect(first.stdout + first.stderr).toContain('--answer');
    const gate = ledgerOf(repo, runId).at(-2)!;
    expect(gate).toMatchObject({ type: 'ESCALATION_REQUESTED', data: { reason: 'plan_approval', options: ['approve', 'switch', 'edit', 'guidance', 'abort'] } });
    expect((gate.data as { message: string }).message).toMatch(/plan-A \(the PM chose it\).*task\(s\)/);
    expect((gate.data as { message: string }).message).toContain('graph TD');

    // An edit that breaks the plan is refused with the validator's message; nothing is recorded.
    const before = ledgerOf(repo, runId).length;
    expectCleanError(acia(['resume', runId, '--repo', repo, '--answer', 'edit {"id":"plan-A","rationale":"x","tasks":[]}']), 2, /the edited plan is invalid: \$\.tasks/);
    expectCleanError(acia(['resume', runId, '--repo', repo, '--answer', 'edit {not json']), 2, /the edited plan is not valid JSON/);
    expect(ledgerOf(repo, runId).length).toBe(before);

    // Messages sent while the run waits: taken in when it goes on, handed to t1's agent with its first request.
    const q = acia(['say', runId, '--repo', repo, '--task', 't1', 'QUEUED-NOTE keep the old exports']);
    expect(q.code, q.stderr).toBe(0);
    expect(q.stdout).toMatch(/^sent m-\S+ to task t1 of \S+ \(queue\)/);
    expect(acia(['say', runId, '--repo', repo, '--task', 't1', '--mode', 'steer', 'STEERED-NOTE use the helper file']).code).toBe(0);
    expectCleanError(acia(['say', runId, '--repo', repo, '--task', 't9', 'hello']), 2, /cannot message task t9 of run \S+: no proposed plan has a task t9/);
    expectCleanError(acia(['say', runId, '--repo', repo, '--mode', 'shout', 'hello']), 2, /--mode expects queue, steer or interrupt/);

    // A valid edit: Plan-A with t1's title changed; recorded as an amendment with its diff, then run.
    const proposed = ledgerOf(repo, runId).find((e) => e.type === 'PLAN_PROPOSED')!.data as { planSet: { plans: { id: string; tasks: { id: string; title?: string }[] }[] } };
    const plan = structuredClone(proposed.planSet.plans[0]!);
    plan.tasks[0]!.title = 'EDITED titleCase helper';
    const go = acia(['resume', runId, '--repo', repo, '--answer', `edit ${JSON.stringify(plan)}`]);
    expect(go.code, go.stdout + go.stderr).toBe(0);
    const entries = ledgerOf(repo, runId);
    const amended = entries.find((e) => e.type === 'PLAN_AMENDED')!;
    expect(amended).toMatchObject({ actor: 'human', data: { by: 'human', planId: 'plan-A' } });
    expect(JSON.stringify(amended.data)).toContain('EDITED titleCase helper');
    expect(entries.find((e) => e.type === 'PLAN_SELECTED')).toMatchObject({ data: { planId: 'plan-A', method: 'human' } });
    const received = entries.filter((e) => e.type === 'MESSAGE_RECEIVED');
    expect(received.map((e) => (e.data as { mode: string }).mode)).toEqual(['queue', 'steer']);
    expect(received.every((e) => e.actor === 'human' && /\S+@\S+/.test((e.data as { author: string }).author))).toBe(true);
    expect(entries.filter((e) => e.type === 'MESSAGE_DELIVERED')).toHaveLength(2);
    const [firstRequest] = requestsOf(repo, runId, 'dev:t1');
    expect(firstRequest).toContain('QUEUED-NOTE keep the old exports');
    expect(firstRequest).toContain('STEERED-NOTE use the helper file');
    expect(requestsOf(repo, runId, 'pm').join('')).not.toContain('QUEUED-NOTE');
    expect(acia(['show', runId, '--repo', repo]).stdout).toMatch(/message m-\S+ from \S+ to t1 \(queue\): delivered to dev:t1 at turn 1/);

    // A finished run refuses a message before writing anything.
    expectCleanError(acia(['say', runId, '--repo', repo, '--task', 't1', 'too late']), 2, /is finished \(it succeeded\); a message can no longer reach it/);
  }, 180_000);

  it('approval gate: approve runs the PM\'s plan as proposed, recorded as the human\'s choice', () => {
    const repo = sampleRepo('direct-approve');
    const script = editedScript('happy', (turns) => turns.forEach((t) => (t.latencyMs = 0)));
    expect(acia(['run', GOAL, '--repo', repo, '--approve-plan', ...flags(script)]).code).toBe(3);
    const runId = onlyRunId(repo);
    expect(types(repo, runId)).not.toContain('TASK_STARTED');
    const done = acia(['resume', runId, '--repo', repo, '--answer', 'approve']);
    expect(done.code, done.stdout + done.stderr).toBe(0);
    const entries = ledgerOf(repo, runId);
    expect(entries.find((e) => e.type === 'HUMAN_RESPONSE')).toMatchObject({ data: { action: 'approve' } });
    expect(entries.find((e) => e.type === 'PLAN_SELECTED')).toMatchObject({ data: { planId: 'plan-A', method: 'human' } });
    expect(types(repo, runId)).not.toContain('PLAN_AMENDED');
    expect(entries.at(-1)).toMatchObject({ type: 'RUN_COMPLETED', data: { reason: 'succeeded' } });
  }, 120_000);

  it('approval gate: a rejection with feedback makes the PM plan again from it; switch runs the other plan', () => {
    const repo = sampleRepo('direct-switch');
    // The PM answers twice: its first plans, and its plans again after the rejection.
    const script = editedScript('plan-b', (turns) => {
      for (const t of turns) t.latencyMs = 0;
      turns.splice(1, 0, structuredClone(turns[0]!));
    });
    expect(acia(['run', GOAL, '--repo', repo, '--approve-plan', ...flags(script)]).code).toBe(3);
    const runId = onlyRunId(repo);
    const again = acia(['resume', runId, '--repo', repo, '--answer', 'FEEDBACK-1 split the helper from its test']);
    expect(again.code, again.stdout + again.stderr).toBe(3);
    const pm = requestsOf(repo, runId, 'pm');
    expect(pm).toHaveLength(2);
    expect(pm[0]).not.toContain('FEEDBACK-1');
    expect(pm[1]).toContain('FEEDBACK-1 split the helper from its test');
    expect(ledgerOf(repo, runId).filter((e) => e.type === 'ESCALATION_REQUESTED' && (e.data as { reason: string }).reason === 'plan_approval')).toHaveLength(2);
    expectCleanError(acia(['resume', runId, '--repo', repo, '--answer', 'switch Plan-Z']), 2, /there is no plan Plan-Z \(plans: plan-A, plan-B\)/);
    const done = acia(['resume', runId, '--repo', repo, '--answer', 'switch']);
    expect(done.code, done.stdout + done.stderr).toBe(0);
    const entries = ledgerOf(repo, runId);
    expect(entries.find((e) => e.type === 'PLAN_SELECTED')).toMatchObject({ data: { planId: 'plan-B', method: 'human' } });
    expect(types(repo, runId)).toContain('GOAL_AMENDED');
    expect(entries.some((e) => e.type === 'TASK_STARTED' && (e.data as { taskId: string }).taskId === 't1')).toBe(false);
  }, 180_000);

  it('an interrupt stops the Dev agent’s model call in flight and reaches it in its next request', async () => {
    const repo = sampleRepo('direct-interrupt');
    // The Dev agent's first reply would take 10 minutes: only the interrupt ends it in time.
    const script = editedScript('happy', (turns) => {
      for (const t of turns) t.latencyMs = 0;
      const dev = turns.find((t) => t.caller === 'dev:t1')!;
      turns.splice(turns.indexOf(dev), 0, { ...structuredClone(dev), latencyMs: 600_000 });
    });
    const run = startAcia(['run', GOAL, '--repo', repo, ...flags(script)]);
    const deadline = Date.now() + 60_000;
    while (!/t1 started/.test(run.output()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const runId = onlyRunId(repo);
    const say = acia(['say', runId, '--repo', repo, '--task', 't1', '--mode', 'interrupt', 'INTERRUPT-NOTE stop and read this']);
    expect(say.code, say.stderr).toBe(0);
    const r = await run.done;
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const delivered = ledgerOf(repo, runId).find((e) => e.type === 'MESSAGE_DELIVERED');
    expect(delivered).toMatchObject({ data: { taskId: 't1', caller: 'dev:t1', at: 'interrupt' } });
    expect(requestsOf(repo, runId, 'dev:t1')[0]).toContain('INTERRUPT-NOTE stop and read this');
    // The replay hands the recorded message over where it was delivered: every request is the recorded one.
    const replay = acia(['replay', runId, '--repo', repo]);
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
    expect(replay.stdout).toMatch(/identical/);
  }, 180_000);

  it.skipIf(!hasScript)('approval gate on a terminal: an edit in $EDITOR that breaks the plan is refused with the reason and asked again; switch runs the other plan', async () => {
    const repo = sampleRepo('direct-tty');
    const dir = tempDir('direct-tty-editor');
    // The "editor" empties the plan's task list: the validator refuses it.
    const editor = join(dir, 'editor.sh');
    writeFileSync(editor, `#!/bin/sh\nprintf '%s' '{"id":"plan-A","rationale":"x","tasks":[]}' > "$1"\n`);
    chmodSync(editor, 0o755);
    const script = editedScript('plan-b', (turns) => turns.forEach((t) => (t.latencyMs = 0)));
    const r = await onTty(['run', GOAL, '--repo', repo, '--approve-plan', ...flags(script)], ['edit', 'switch'], { NO_COLOR: '1', EDITOR: editor });
    expect(r.code, r.transcript).toBe(0);
    expect(r.prompts).toBe(2);
    expect(r.transcript).toContain('Approve the plan before the team starts.');
    expect(r.transcript).toMatch(/That answer was refused: the edited plan is invalid: \$\.tasks/);
    const runId = onlyRunId(repo);
    const entries = ledgerOf(repo, runId);
    expect(entries.filter((e) => e.type === 'HUMAN_RESPONSE').map((e) => e.data)).toEqual([{ escalationSeq: expect.any(Number), action: 'switch', text: 'plan-B' }]);
    expect(entries.some((e) => e.type === 'PLAN_AMENDED')).toBe(false);
    expect(entries.find((e) => e.type === 'PLAN_SELECTED')).toMatchObject({ data: { planId: 'plan-B', method: 'human' } });
  }, 180_000);
});
