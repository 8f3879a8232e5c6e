// Two `acia run` on one repository at the same time: both finish, each in its own worktrees and run
// branch, both ledgers verify, and the user's checkout is untouched.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ScriptTurn } from '../../src/core/llm/script.js';
import { CLI, tempDir, type CliResult } from '../e2e/helpers.js';
import { faultScript, fileOnRunBranch, GOAL, listRuns, RETURN_TURN, sampleRepo, sh, TEST_COMMAND, terminalOf, verifyCode } from './harness.js';

function aciaAsync(args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', XDG_STATE_HOME: process.env.XDG_STATE_HOME ?? '', LANG: 'C.UTF-8', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

function scriptFile(devTurns: ScriptTurn[]): string {
  const file = join(tempDir('conc-script'), 'script.json');
  writeFileSync(file, JSON.stringify(faultScript({ devTurns })));
  return file;
}

const runArgs = (repo: string, script: string) => ['run', GOAL, '--repo', repo, '--model', `scripted:${script}`, '--sandbox', 'off', '--test-command', TEST_COMMAND];

describe('two runs on one repository at once', () => {
  it('both finish in their own worktrees and run branches; both ledgers verify; the checkout is untouched', async () => {
    const repo = sampleRepo('concurrency');
    const head = sh(repo, 'git', 'rev-parse', 'HEAD');
    const a = scriptFile([{ caller: 'dev:t1', latencyMs: 200, toolCalls: [{ name: 'write_file', input: { path: 'VERSION', content: '1.0.1\n' } }] }, RETURN_TURN]);
    const b = scriptFile([{ caller: 'dev:t1', latencyMs: 200, toolCalls: [{ name: 'write_file', input: { path: 'NOTES.md', content: '# notes\n' } }] }, RETURN_TURN]);

    const [ra, rb] = await Promise.all([aciaAsync(runArgs(repo, a)), aciaAsync(runArgs(repo, b))]);
    expect(ra.code, ra.stderr).toBe(0);
    expect(rb.code, rb.stderr).toBe(0);

    const runs = listRuns(repo);
    expect(runs).toHaveLength(2);
    const byFile = new Map<string, string>();
    for (const runId of runs) {
      const { reason, entries } = terminalOf(repo, runId);
      expect(reason).toBe('succeeded');
      expect(entries[0]!.data).toMatchObject({ baseCommit: head, runBranch: `acia/${runId}` });
      // every task of this run worked in a worktree and on a branch named for this run only
      const started = entries.filter((e) => e.type === 'TASK_STARTED').map((e) => e.data as { branch: string; worktree: string });
      expect(started.length).toBeGreaterThanOrEqual(2);
      for (const s of started) {
        expect(s.branch.startsWith(`acia-tasks/${runId}/`)).toBe(true);
        expect(s.worktree.startsWith(`.acia/worktrees/${runId}/`)).toBe(true);
      }
      const v = verifyCode(repo, runId);
      expect(v.code, v.stdout + v.stderr).toBe(0);
      byFile.set(fileOnRunBranch(repo, runId, 'VERSION') === null ? 'NOTES.md' : 'VERSION', runId);
    }
    // each run branch holds its own change and not the other's
    expect([...byFile.keys()].sort()).toEqual(['NOTES.md', 'VERSION']);
    expect(fileOnRunBranch(repo, byFile.get('VERSION')!, 'NOTES.md')).toBeNull();
    expect(fileOnRunBranch(repo, byFile.get('NOTES.md')!, 'NOTES.md')).toBe('# notes\n');

    // the wiki index, rendered by whichever run finished last, lists both
    const index = readFileSync(join(repo, '.acia', 'wiki', 'index.md'), 'utf8');
    for (const runId of runs) expect(index).toContain(runId);
    expect(readdirSync(join(repo, '.acia', 'wiki')).filter((f) => f.endsWith('.tmp'))).toEqual([]);

    expect(sh(repo, 'git', 'rev-parse', 'HEAD')).toBe(head);
    expect(sh(repo, 'git', 'symbolic-ref', '--short', 'HEAD')).toBe('main');
    expect(sh(repo, 'git', 'status', '--porcelain')).toBe('');
  });
});
