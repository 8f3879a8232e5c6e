// Unusual repositories under `acia run`: no commits, detached HEAD, a shallow clone, a submodule, binary
// files, non-UTF-8 file names, 10,000 files and a 50 MB file. The team still works, or says why not.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ScriptTurn } from '../../src/core/llm/script.js';
import { tempDir } from '../e2e/helpers.js';
import { faultScript, fileOnRunBranch, runCli, sampleRepo, sh, terminalOf, toolOutput, verifyCode, type CliRun } from './harness.js';

function expectWorked(repo: string, r: CliRun) {
  expect(r.code, r.stderr).toBe(0);
  expect(r.runIds).toHaveLength(1);
  const runId = r.runIds[0]!;
  const t = terminalOf(repo, runId);
  expect(t.reason, t.message).toBe('succeeded');
  expect(fileOnRunBranch(repo, runId)).toBe('1.0.1\n');
  const v = verifyCode(repo, runId);
  expect(v.code, v.stdout + v.stderr).toBe(0);
  expect(sh(repo, 'git', 'status', '--porcelain')).toBe('');
  return { runId, entries: t.entries, branch: `acia/${runId}` };
}

const treeEntry = (repo: string, rev: string, path: string) => sh(repo, 'git', 'ls-tree', rev, '--', path);

describe('acia run on unusual repositories', () => {
  it('a repository with no commits: exit 2 with one line saying so, nothing created', () => {
    const repo = sampleRepo('repo-empty', undefined, { commit: false });
    const r = runCli(repo, faultScript());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^acia: \S+ has no commits yet$/m);
    expect(r.runIds).toEqual([]);
    expect(sh(repo, 'git', 'branch', '--list')).toBe('');
  });

  it('a detached HEAD: the run starts from the detached commit and leaves HEAD where it was', () => {
    const repo = sampleRepo('repo-detached');
    const first = sh(repo, 'git', 'rev-parse', 'HEAD');
    sh(repo, 'git', 'commit', '-q', '--allow-empty', '-m', 'second');
    sh(repo, 'git', 'checkout', '-q', '--detach', first);
    const { entries } = expectWorked(repo, runCli(repo, faultScript()));
    expect(entries[0]!.data).toMatchObject({ baseCommit: first });
    expect(sh(repo, 'git', 'rev-parse', 'HEAD')).toBe(first);
    expect(() => execFileSync('git', ['symbolic-ref', '-q', 'HEAD'], { cwd: repo, stdio: 'ignore' })).toThrow();
  });

  it('a shallow clone (--depth 1): works on the one commit it has', () => {
    const origin = sampleRepo('repo-origin');
    sh(origin, 'git', 'commit', '-q', '--allow-empty', '-m', 'second');
    const repo = join(tempDir('repo-shallow'), 'clone');
    sh(origin, 'git', 'clone', '-q', '--depth', '1', `file://${origin}`, repo);
    expect(sh(repo, 'git', 'rev-parse', '--is-shallow-repository')).toBe('true');
    const { branch } = expectWorked(repo, runCli(repo, faultScript()));
    expect(sh(repo, 'git', 'rev-parse', `${branch}~1`)).toBe(sh(repo, 'git', 'rev-parse', 'HEAD'));
  });

  it('a submodule: the run works beside it and leaves its gitlink unchanged', () => {
    const sub = sampleRepo('repo-sub');
    const repo = sampleRepo('repo-super');
    sh(repo, 'git', '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'vendor/sub');
    sh(repo, 'git', 'commit', '-q', '-m', 'add a submodule');
    const { branch } = expectWorked(repo, runCli(repo, faultScript()));
    expect(treeEntry(repo, branch, 'vendor/sub')).toBe(treeEntry(repo, 'HEAD', 'vendor/sub'));
    expect(treeEntry(repo, 'HEAD', 'vendor/sub')).toMatch(/^160000 commit /);
  });

  it('binary files and non-UTF-8 names: reading a binary file is refused clearly, and both survive on the run branch', () => {
    const latin1Name = Buffer.from('caf\xe9.txt', 'latin1');
    const repo = sampleRepo('repo-binary', (d) => {
      const png = Buffer.alloc(4096);
      for (let i = 0; i < png.length; i++) png[i] = (i * 7919) % 256;
      writeFileSync(join(d, 'logo.png'), png);
      writeFileSync(Buffer.concat([Buffer.from(`${d}/`), latin1Name]), 'a latin-1 file name\n');
    });
    const dev: ScriptTurn[] = [
      { caller: 'dev:t1', toolCalls: [{ name: 'list_dir', input: { path: '.' } }] },
      { caller: 'dev:t1', toolCalls: [{ name: 'read_file', input: { path: 'logo.png' } }] },
      { caller: 'dev:t1', toolCalls: [{ name: 'search', input: { pattern: 'latin-1' } }] },
    ];
    const { runId, branch } = expectWorked(repo, runCli(repo, faultScript({ dev })));
    const [read] = toolOutput(repo, runId, 'read_file');
    expect(read).toMatchObject({ ok: false });
    expect(read!.text).toContain('logo.png looks binary');
    const [listing] = toolOutput(repo, runId, 'list_dir');
    expect(listing!.text).toContain('logo.png');
    expect(listing).toMatchObject({ ok: true });
    expect(listing!.text).toContain('caf\uFFFD.txt  [name is not valid UTF-8: tools cannot open it]');
    expect(toolOutput(repo, runId, 'search')).toEqual([expect.objectContaining({ ok: true })]);
    expect(treeEntry(repo, branch, 'logo.png')).toBe(treeEntry(repo, 'HEAD', 'logo.png'));
    const names = execFileSync('git', ['ls-tree', '-r', '-z', '--name-only', branch], { cwd: repo });
    expect(names.includes(latin1Name)).toBe(true);
  });

  it('10,000 files: the run works and the context packet stays small', () => {
    const repo = sampleRepo('repo-10k', (d) => {
      for (let i = 0; i < 100; i++) {
        mkdirSync(join(d, 'gen', String(i)), { recursive: true });
        for (let j = 0; j < 100; j++) writeFileSync(join(d, 'gen', String(i), `f${j}.txt`), `${i}/${j}\n`);
      }
    });
    expect(Number(sh(repo, 'sh', '-c', 'git ls-files | wc -l'))).toBe(10_002);
    const { entries } = expectWorked(repo, runCli(repo, faultScript()));
    const pmCall = entries.find((e) => e.type === 'LLM_CALL' && (e.data as { caller: string }).caller === 'pm')!.data as { usage: { inputTokens: number } };
    expect(pmCall.usage.inputTokens).toBeLessThan(20_000);
  }, 120_000); // four checkouts of 10,000 files: over half a minute on a loaded machine

  it('a 50 MB file: reading it is refused with its size, the run works and the file is unchanged', () => {
    const repo = sampleRepo('repo-50mb', (d) => writeFileSync(join(d, 'big.txt'), Buffer.alloc(50 * 1024 * 1024, 'all work and no play\n')));
    const dev: ScriptTurn[] = [{ caller: 'dev:t1', toolCalls: [{ name: 'read_file', input: { path: 'big.txt' } }] }];
    const { runId, branch } = expectWorked(repo, runCli(repo, faultScript({ dev })));
    const [read] = toolOutput(repo, runId, 'read_file');
    expect(read).toMatchObject({ ok: false });
    expect(read!.text).toMatch(/big\.txt is 52428800 bytes, over the \d+-byte read limit/);
    expect(treeEntry(repo, branch, 'big.txt')).toBe(treeEntry(repo, 'HEAD', 'big.txt'));
  });
});
