// A human checkpoint in a saved plan: without a TTY the run waits (exit 3); `resume --answer approve`
// records the answer, the guard over it is taken, and the rest of the plan runs.
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acia, git, ledgerOf, onlyRunId, tempDir, testsPassOn } from './helpers.js';

const SCENARIOS = join(import.meta.dirname, '..', '..', 'workspace', 'scenarios');

const plan = {
  goalId: 'g',
  contextRef: `sha256:${'0'.repeat(64)}`,
  selection: { method: 'human', chosenPlanId: 'plan-A', rationale: 'reviewed by hand' },
  plans: [
    {
      id: 'plan-A',
      goalId: 'g',
      contextRef: `sha256:${'0'.repeat(64)}`,
      capabilityMapVersion: 'acia-caps@1',
      rationale: 'ask before touching the code',
      tasks: [
        { id: 'ok', capability: 'human.approve', input: { question: 'Add titleCase to the public API?' } },
        { id: 'impl', capability: 'dev.implement', input: { instructions: 'Add titleCase in src/title-case.js with a test.' } },
        { id: 'check', capability: 'qa.verify', input: {} },
      ],
      edges: [
        { from: 'ok', to: 'impl', guard: '$ok.approved == true' },
        { from: 'impl', to: 'check' },
      ],
    },
  ],
};

const code = `export function titleCase(text) {\n  return text.replace(/[A-Za-z]+/g, (w) => w[0].toUpperCase() + w.slice(1).toLowerCase());\n}\n`;
const test = `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { titleCase } from '../src/title-case.js';\ntest('t', () => assert.equal(titleCase('a b'), 'A B'));\n`;
const script = {
  version: 1,
  model: 'claude-sonnet-5-5',
  turns: [
    { caller: 'dev:impl', toolCalls: [{ name: 'write_file', input: { path: 'src/title-case.js', content: code } }, { name: 'write_file', input: { path: 'test/title-case.test.js', content: test } }] },
    { caller: 'dev:impl', toolCalls: [{ name: 'return_result', input: { summary: 'Added titleCase.' } }] },
    { caller: 'qa:check', toolCalls: [{ name: 'run_tests', input: {} }] },
    { caller: 'qa:check', toolCalls: [{ name: 'return_result', input: { passed: true, summary: 'ok' } }] },
  ],
};

describe('human.approve', () => {
  it('waits for the human without a TTY, then follows the guard over the answer', () => {
    const dir = tempDir('approve');
    const repo = join(dir, 'repo');
    cpSync(join(SCENARIOS, '_base'), repo, { recursive: true });
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '-A');
    git(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'base');
    writeFileSync(join(dir, 'plan.json'), JSON.stringify(plan));
    writeFileSync(join(dir, 'script.json'), JSON.stringify(script));
    const model = `scripted:${join(dir, 'script.json')}`;

    // A hand-written plan names no real packet: exec refuses it unless told to re-bind (recorded as GOAL_AMENDED).
    const first = acia(['exec', join(dir, 'plan.json'), '--rebind-context', '--repo', repo, '--model', model, '--quiet']);
    expect(first.code, first.stderr).toBe(3);
    const runId = onlyRunId(repo);
    const esc = ledgerOf(repo, runId).find((e) => e.type === 'ESCALATION_REQUESTED')!.data as { reason: string; taskId: string; message: string };
    expect(esc).toMatchObject({ reason: 'human_approve', taskId: 'ok', message: 'Add titleCase to the public API?' });
    // no dev work happened before the answer
    expect(ledgerOf(repo, runId).some((e) => e.actor === 'dev:impl')).toBe(false);

    const second = acia(['resume', runId, '--repo', repo, '--answer', 'approve', '--quiet']);
    expect(second.code, second.stdout + second.stderr).toBe(0);
    const entries = ledgerOf(repo, runId);
    expect(entries.find((e) => e.type === 'HUMAN_RESPONSE')!.data).toMatchObject({ action: 'approve' });
    expect(entries.find((e) => e.type === 'BRANCH_TAKEN')!.data).toMatchObject({ from: 'ok', to: 'impl', value: true });
    expect(entries.find((e) => e.type === 'PLAN_SELECTED')!.data).toMatchObject({ method: 'human' });
    expect(testsPassOn(repo, `acia/${runId}`)).toBe(true);
    expect(acia(['verify', runId, '--repo', repo]).code).toBe(0);
  });
});
