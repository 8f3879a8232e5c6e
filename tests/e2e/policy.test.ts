// protectedPaths through the task.post policy hook: the change is undone (COMPENSATION_APPLIED), the run
// waits for a human (exit 3), and an approval lets the same task through on resume.
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acia, git, ledgerOf, onlyRunId, tempDir, testsPassOn } from './helpers.js';

const SCENARIOS = join(import.meta.dirname, '..', '..', 'workspace', 'scenarios');

describe('policy: protectedPaths', () => {
  it('denies a change to a protected path, compensates, escalates, and proceeds once approved', () => {
    const repo = join(tempDir('policy'), 'repo');
    cpSync(join(SCENARIOS, '_base'), repo, { recursive: true });
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '-A');
    git(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'base');
    mkdirSync(join(repo, '.acia'));
    writeFileSync(join(repo, '.acia', 'config.json'), JSON.stringify({ protectedPaths: ['src/'] }));
    const model = `scripted:${join(SCENARIOS, 'happy', 'script.json')}`;

    const first = acia(['run', 'Add a titleCase helper with a test', '--repo', repo, '--model', model, '--quiet']);
    expect(first.code, first.stderr).toBe(3);
    const runId = onlyRunId(repo);
    let entries = ledgerOf(repo, runId);
    const denial = entries.find((e) => e.type === 'POLICY_DECISION' && (e.data as { hook: string }).hook === 'task.post')!.data as { response: { allow: boolean; reason: string } };
    expect(denial.response).toMatchObject({ allow: false, reason: 'changed protected path src/title-case.js' });
    expect(entries.some((e) => e.type === 'COMPENSATION_APPLIED' && (e.data as { taskId: string }).taskId === 't1')).toBe(true);
    expect(entries.find((e) => e.type === 'ESCALATION_REQUESTED')!.data).toMatchObject({ reason: 'policy_denied', taskId: 't1' });
    expect(entries.some((e) => e.type === 'MERGE')).toBe(false);

    const second = acia(['resume', runId, '--repo', repo, '--answer', 'approve', '--quiet']);
    expect(second.code, second.stdout + second.stderr).toBe(0);
    entries = ledgerOf(repo, runId);
    expect(entries.filter((e) => e.type === 'MERGE').map((e) => (e.data as { taskId: string }).taskId)).toEqual(['t1']);
    expect(testsPassOn(repo, `acia/${runId}`)).toBe(true);
    expect(acia(['verify', runId, '--repo', repo]).code).toBe(0);
  });
});
