// The eval harness through the library: checkouts without the repository's future, setup before the
// agents and again before grading, a test patch that does not apply, atomic results and resume.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDeps } from '../../src/app/create-deps.js';
import { systemClock } from '../../src/core/acm/ids.js';
import { loadConfig } from '../../src/core/config/load.js';
import { noHuman } from '../../src/team/deps.js';
import { Git } from '../../src/team/git.js';
import { prepareCheckout } from '../../src/eval/checkout.js';
import { loadInstances } from '../../src/eval/instances.js';
import { runEval, type EvalProgress } from '../../src/eval/run-eval.js';

const sh = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@x', ...args], { cwd, encoding: 'utf8' }).trim();

describe('prepareCheckout', () => {
  it('checks out base_commit with no remote, later commit, tag or reflog left', async () => {
    const origin = mkdtempSync(join(tmpdir(), 'acia-origin-'));
    sh(origin, 'init', '-q', '-b', 'main');
    writeFileSync(join(origin, 'a.js'), 'bug\n');
    sh(origin, 'add', '-A');
    sh(origin, 'commit', '-q', '-m', 'base');
    const base = sh(origin, 'rev-parse', 'HEAD');
    writeFileSync(join(origin, 'a.js'), 'THE FIX\n');
    sh(origin, 'commit', '-q', '-am', 'fix');
    sh(origin, 'tag', 'v2');
    const fix = sh(origin, 'rev-parse', 'HEAD');
    const target = join(mkdtempSync(join(tmpdir(), 'acia-co-')), 'repo');
    const got = await prepareCheckout(new Git(systemClock), { instance_id: 'x', repo: origin, repoSource: origin, origin: 't:1', base_commit: base.slice(0, 10), problem_statement: 'p', test_command: 't', test_patch: '', FAIL_TO_PASS: [], PASS_TO_PASS: [], setup: [] }, target);
    expect(got).toBe(base);
    expect(readFileSync(join(target, 'a.js'), 'utf8')).toBe('bug\n');
    expect(sh(target, 'remote')).toBe('');
    expect(sh(target, 'log', '--all', '--format=%H')).toBe(base);
    expect(() => sh(target, 'cat-file', '-e', fix)).toThrow();
  });
});

describe('prepareCheckout of a plain directory', () => {
  it('keeps relative links as they are: the same base_commit wherever the task set lives, nothing pointing back at it', async () => {
    const commitOf = async (root: string) => {
      const src = join(root, 'set', 'src');
      mkdirSync(join(src, 'lib'), { recursive: true });
      writeFileSync(join(src, 'lib', 'real.js'), 'module.exports = 1;\n');
      symlinkSync('lib/real.js', join(src, 'index.js'));
      symlinkSync('../lib', join(src, 'lib', 'self'));
      const target = join(root, 'repo');
      const inst = { instance_id: 'links', repo: 'src', repoSource: src, origin: 'p', base_commit: '0000000', problem_statement: 'p', test_command: 't', test_patch: '', FAIL_TO_PASS: [], PASS_TO_PASS: [], setup: [] };
      const given = await prepareCheckout(new Git(systemClock), inst, target).then(
        () => '',
        (e: Error) => /gives ([0-9a-f]{40})/.exec(e.message)?.[1] ?? '',
      );
      return { given, target, inst };
    };
    const a = await commitOf(mkdtempSync(join(tmpdir(), 'acia-links-a-')));
    const b = await commitOf(join(mkdtempSync(join(tmpdir(), 'acia-links-b-')), 'elsewhere', 'deeper'));
    expect(a.given).toMatch(/^[0-9a-f]{40}$/);
    expect(b.given).toBe(a.given);
    // With the right base_commit the checkout is made, and its links are the source's, relative.
    const got = await prepareCheckout(new Git(systemClock), { ...a.inst, base_commit: a.given }, a.target);
    expect(got).toBe(a.given);
    expect(readlinkSync(join(a.target, 'index.js'))).toBe('lib/real.js');
    expect(readlinkSync(join(a.target, 'lib', 'self'))).toBe('../lib');
  });
});

describe('runEval', () => {
  it('runs setup before grading, reports a patch that does not apply, and resumes from finished results', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'acia-runeval-'));
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'a.txt'), 'one\n');
    const empty = join(dir, 'empty-script.json');
    writeFileSync(empty, JSON.stringify({ version: 1, turns: [] }));
    // The commit id the harness makes of src/ for an instance (fixed identity and dates; the message names it).
    const baseOf = (id: string) =>
      prepareCheckout(new Git(systemClock), { instance_id: id, repo: 'src', repoSource: join(dir, 'src'), origin: 'p', base_commit: '0000000', problem_statement: 'p', test_command: 't', test_patch: '', FAIL_TO_PASS: [], PASS_TO_PASS: [], setup: [] }, join(dir, 'probe')).then(
        () => '',
        (e: Error) => /gives ([0-9a-f]{40})/.exec(e.message)?.[1] ?? '',
      );
    const bases = new Map<string, string>();
    for (const id of ['setup-ok', 'setup-fails', 'bad-patch']) bases.set(id, await baseOf(id));
    const inst = (id: string, extra: object) => JSON.stringify({ instance_id: id, repo: 'src', base_commit: bases.get(id), problem_statement: 'nothing to do', test_command: 'test -f setup-ran', ...extra });
    const badPatch = 'diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-not what is there\n+x\n';
    writeFileSync(
      join(dir, 'tasks.jsonl'),
      [inst('setup-ok', { setup: ['touch setup-ran'] }), inst('setup-fails', { setup: ['exit 3'] }), inst('bad-patch', { setup: ['touch setup-ran'], test_patch: badPatch })].join('\n'),
    );
    const instances = loadInstances(join(dir, 'tasks.jsonl'));
    const out = join(dir, 'out');
    const progress: EvalProgress[] = [];
    const options = {
      instances,
      out,
      parallel: 2,
      modelName: 'acia/test',
      gradeTimeoutMs: 30_000,
      onProgress: (p: EvalProgress) => progress.push(p),
      makeDeps: (repo: string, i: (typeof instances)[number]) =>
        createDeps({
          kind: 'eval',
          repo,
          config: loadConfig({ repo: null, env: {}, userFile: null, flags: { model: `scripted:${empty}`, sandbox: 'off', testCommand: i.test_command } }).config,
          env: process.env,
          escalator: noHuman,
          warn: () => undefined,
        }),
    };
    const first = await runEval(options);
    expect(first.failed).toEqual([]);
    const byId = new Map(first.results.map((r) => [r.instance_id, r]));
    // The run itself fails (the script has no turns); grading still runs, on the base, after setup.
    expect(byId.get('setup-ok')).toMatchObject({ reason: 'error', resolved: true, model_patch: '' });
    expect(byId.get('setup-fails')).toMatchObject({ reason: 'error', resolved: false, runId: null, message: expect.stringMatching(/setup command failed \(exit 3\): exit 3/) });
    expect(byId.get('bad-patch')).toMatchObject({ resolved: false, gradeError: expect.stringMatching(/the test patch does not apply/) });
    expect(progress.at(-1)).toMatchObject({ done: 3, total: 3, resolved: 1 });
    const again = await runEval({ ...options, onProgress: () => undefined });
    expect(again.skipped).toBe(3);
    expect(readFileSync(join(out, 'predictions.jsonl'), 'utf8').trimEnd().split('\n')).toHaveLength(3);
    await expect(runEval({ ...options, modelName: 'acia/other' })).rejects.toMatchObject({ code: 'USAGE', message: expect.stringMatching(/holds results of acia\/test/) });
  }, 60_000);
});
