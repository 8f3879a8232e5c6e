// The configured setup command, a test command that cannot start, acia show --output and a rejected agent
// result, through the built CLI with the default sandbox (issue 12).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandboxAvailable } from '../helpers/sandbox-available.js';
import { acia, git, ledgerOf, onlyRunId, tempDir } from './helpers.js';
import { devThenQa, turn } from './real-projects/harness.js';

/** A committed repository holding `files`. */
function committed(prefix: string, files: Record<string, string>): string {
  const repo = join(tempDir(prefix), 'repo');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(repo, path, '..'), { recursive: true });
    writeFileSync(join(repo, path), text);
  }
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'base');
  return repo;
}

/** The scripted model's turns, written beside the repository. */
function writeScript(repo: string, turns: unknown[]): string {
  const file = join(repo, '..', 'script.json');
  writeFileSync(file, JSON.stringify({ version: 1, turns }));
  return file;
}

function repoWithoutDependencies(): string {
  // eslint is a devDependency nobody installed: `npm test` exits 127 with "eslint: not found".
  return committed('broken-env', {
    'package.json': `${JSON.stringify({ name: 'app', version: '1.0.0', scripts: { build: 'mkdir -p dist && echo built > dist/out.txt', test: 'eslint . && node --test' }, devDependencies: { eslint: '^8' } }, null, 2)}\n`,
    'src/index.js': 'export const one = 1;\n',
  });
}

describe.skipIf(!sandboxAvailable())('setup, a broken environment and acia show --output', () => {
  it('runs setup in each worktree, escalates a test command that cannot start at once, and shows why', () => {
    const repo = repoWithoutDependencies();
    const script = writeScript(repo, [
      turn('pm', 'return_result', devThenQa('Add two.', ['src/two.js'])),
      turn('dev:t1', 'write_file', { path: 'src/two.js', content: 'export const two = 2;\n' }),
      // Rejected by the Dev result schema (no summary): recorded with the reason.
      turn('dev:t1', 'return_result', { done: true }),
      turn('dev:t1', 'return_result', { summary: 'Added src/two.js.' }),
      turn('qa:t2', 'run_tests', {}),
      turn('qa:t2', 'return_result', { passed: false, summary: 'Tests did not run.' }),
    ]);
    // Without the test runner's own node_modules/.bin (npx puts this project's eslint on PATH).
    const PATH = (process.env.PATH ?? '').split(':').filter((d) => !d.includes('node_modules')).join(':');
    const env = { ACIA_SETUP: 'npm run build', PATH };
    const config = acia(['config', '--repo', repo], { env });
    expect(config.stdout).toMatch(/^test command\s+npm test --\s+\(detected from package\.json scripts\.test\)$/m);
    expect(config.stdout).toMatch(/^setup\s+npm run build\s+\(configured: setup, env:ACIA_SETUP\)$/m);

    const r = acia(['run', 'Add two', '--repo', repo, '--model', `scripted:${script}`], { env });
    expect(r.code, r.stderr).toBe(3);
    // The progress line says why, and no fix iteration was spent on it.
    expect(r.stderr).toMatch(/t2 verification FAILED \(qa_run: npm test --, exit 127\) — could not run: sh: 1: eslint: not found/);
    expect(r.stderr).toMatch(/needs a human \(environment_broken\): the test command could not run: sh: 1: eslint: not found/);
    const runId = onlyRunId(repo);
    const entries = ledgerOf(repo, runId);
    expect(entries.filter((e) => e.type === 'TASK_ADDED')).toEqual([]);
    const esc = entries.find((e) => e.type === 'ESCALATION_REQUESTED')!.data as { reason: string; options: string[]; lastFailure: string };
    expect(esc.reason).toBe('environment_broken');
    expect(esc.options).toContain('retry');
    expect(esc.lastFailure).toContain('eslint: not found');

    // Setup ran, sandboxed, before each agent, and its output (dist/, not git-ignored) was never committed.
    const setups = entries.filter((e) => e.type === 'TOOL_RESULT' && (e.data as { name: string }).name === 'run_setup');
    expect(setups.map((e) => [(e.data as { taskId: string }).taskId, (e.data as { ok: boolean }).ok])).toEqual([
      ['t1', true],
      ['t2', true],
    ]);
    const checkpoint = entries.find((e) => e.type === 'CHECKPOINT')!.data as { files: string[] };
    expect(checkpoint.files).toEqual(['src/two.js']);
    expect(git(repo, 'ls-tree', '-r', '--name-only', `acia/${runId}`).split('\n').sort()).toEqual(['package.json', 'src/index.js', 'src/two.js']);

    // The rejected result is in the ledger with its reason, and acia show says so.
    const rejected = entries.find((e) => e.type === 'TOOL_RESULT' && e.data.name === 'return_result')!;
    expect(rejected.type === 'TOOL_RESULT' && rejected.data.ok).toBe(false);
    expect(rejected.type === 'TOOL_RESULT' ? (rejected.data.data as { problems: string[] }).problems.join(' ') : '').toMatch(/summary/);
    const show = acia(['show', runId, '--repo', repo]);
    expect(show.stdout).toMatch(/dev:t1\s+return_result rejected: .*summary/);

    // acia show --output: by seq (a TOOL_CALL finds its result), by task, and a clean error otherwise.
    const testsCall = entries.find((e) => e.type === 'TOOL_CALL' && (e.data as { name: string }).name === 'run_tests')!;
    const bySeq = acia(['show', runId, '--repo', repo, '--output', String(testsCall.seq)]);
    expect(bySeq.code).toBe(0);
    expect(bySeq.stdout).toMatch(/^TESTS COULD NOT RUN \[exit code 127\] no test summary recognised: sh: 1: eslint: not found\n\$ npm test --\n/);
    const byTask = acia(['show', runId, '--repo', repo, '--output', 't1']);
    expect(byTask.stdout).toContain('SETUP DONE [exit code 0]');
    expect(byTask.stdout).toContain('[kept out of commits: dist]');
    const bad = acia(['show', runId, '--repo', repo, '--output', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/ledger entry 0 is a RUN_STARTED, which has no output/);
  }, 120_000);

  it('asks the human, saying what it looked for, when the project has no test command', () => {
    const repo = committed('no-tests', { 'src/main.sh': 'echo hi\n' });
    const turns = writeScript(repo, [
      turn('pm', 'return_result', devThenQa('Say bye too.', ['src/main.sh'])),
      turn('dev:t1', 'write_file', { path: 'src/main.sh', content: 'echo hi\necho bye\n' }),
      turn('dev:t1', 'return_result', { summary: 'Added bye.' }),
    ]);
    expect(acia(['config', '--repo', repo]).stdout).toMatch(/^test command\s+\(none\)\s+\(none configured or detected; looked for a package\.json test script/m);
    const r = acia(['run', 'Say bye', '--repo', repo, '--model', `scripted:${turns}`]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/needs a human \(environment_broken\): no test command: none configured and none detected \(looked for a package\.json test script.*go\.mod, Cargo\.toml\)/);
    const entries = ledgerOf(repo, onlyRunId(repo));
    // Neither a failed verification nor a fix task: the QA agent was not even started.
    expect(entries.filter((e) => e.type === 'VERIFICATION' || e.type === 'TASK_ADDED')).toEqual([]);
    expect(entries.some((e) => e.type === 'LLM_CALL' && (e.data as { caller: string }).caller === 'qa:t2')).toBe(false);
    const esc = entries.find((e) => e.type === 'ESCALATION_REQUESTED')!.data as { message: string; options: string[] };
    expect(esc.message).toContain('--test-command');
    expect(esc.options).toContain('skip');
  }, 120_000);
});
