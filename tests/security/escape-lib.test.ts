// Attacks through the library: the runner's limits, the file tools on the real fs, and safeGit on a booby-trapped repo.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BwrapRunner } from '../../src/core/sandbox/bwrap-runner.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';
import { safeGit } from '../../src/core/sandbox/safe-git.js';
import { callTool } from '../../src/core/tools/define-tool.js';
import { gitStatus, gitDiff, runCommand, writeFile } from '../../src/core/tools/tool-sets.js';
import type { ToolContext } from '../../src/core/tools/types.js';
import { ENV_SECRETS, expectNoLeak, makeFixture, SECRET, type Fixture } from './fixture.js';

const sandboxed = sandboxAvailable();
let fx: Fixture;
beforeAll(() => {
  fx = makeFixture();
});
afterAll(() => fx.cleanup());

function ctxWith(runner: BwrapRunner): ToolContext {
  return { root: fx.repo, fs, runner, commandTimeoutS: 10 };
}

describe.skipIf(!sandboxed)('escape suite through the library (BwrapRunner)', () => {
  it('stops a huge file at the file-size limit', async () => {
    const runner = new BwrapRunner({ root: fx.repo, limits: { maxFileBytes: 1024 * 1024 } });
    const r = await callTool(runCommand, { command: 'head -c 20000000 /dev/zero > huge.bin; echo rc=$?' }, ctxWith(runner));
    expect(r.forModel).toMatch(/rc=153|File size limit exceeded/);
    expect(fs.statSync(path.join(fx.repo, 'huge.bin')).size).toBeLessThanOrEqual(1024 * 1024);
    fs.rmSync(path.join(fx.repo, 'huge.bin'));
  });

  it('bounds a fork bomb by the process limit and leaves no process behind', async () => {
    const runner = new BwrapRunner({ root: fx.repo, limits: { maxProcesses: 32 } });
    const marker = `acia-bomb-${process.pid}`;
    const o = await runner.run(`exec -a ${marker} sh -c 'b(){ b | b & }; b; sleep 1'`, { cwd: fx.repo, timeoutMs: 3000 });
    expect(o.exitCode === null || typeof o.exitCode === 'number').toBe(true);
    const left = execFileSync('ps', ['ax', '-o', 'args'], { encoding: 'utf8' }).split('\n').filter((l) => l.includes(marker));
    expect(left).toEqual([]);
  });

  it('kills the whole process tree on abort', async () => {
    const runner = new BwrapRunner({ root: fx.repo });
    const ac = new AbortController();
    const pending = runner.run('sleep 30 & sleep 30 & wait', { cwd: fx.repo, timeoutMs: 20_000, signal: ac.signal });
    setTimeout(() => ac.abort(), 300);
    const o = await pending;
    expect(o.durationMs).toBeLessThan(15_000);
    expect(o.exitCode).not.toBe(0);
  });

  it('builds the environment from the allow-list even when the parent holds secrets', async () => {
    const runner = new BwrapRunner({ root: fx.repo, parentEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: fx.home, NODE_ENV: 'test', ...ENV_SECRETS } });
    // Generous: a sandbox start on a loaded machine can take seconds, and a timed-out command's output is cut.
    const o = await runner.run(`env; cat ${fx.home}/.secret`, { cwd: fx.repo, timeoutMs: 60_000 });
    expectNoLeak(o.output);
    expect(o.output).toContain('NODE_ENV=test');
  });

  it('refuses writing through a symlink swapped in by a command, on the real fs', async () => {
    const runner = new BwrapRunner({ root: fx.repo });
    const ctx = ctxWith(runner);
    expect((await callTool(writeFile, { path: 'swap.txt', content: 'first' }, ctx)).ok).toBe(true);
    await callTool(runCommand, { command: `rm swap.txt && ln -s ${fx.outside}/secret.txt swap.txt` }, ctx);
    expect((await callTool(writeFile, { path: 'swap.txt', content: 'pwned' }, ctx)).ok).toBe(false);
    expect(fs.readFileSync(path.join(fx.outside, 'secret.txt'), 'utf8')).toBe(SECRET);
  });

  it('keeps a linked worktree\'s git dir read-only for commands', async () => {
    const wt = path.join(fx.base, 'wt1');
    execFileSync('git', ['worktree', 'add', '-q', '-b', 'side', wt], { cwd: fx.repo });
    const runner = new BwrapRunner({ root: wt });
    const gitdir = /gitdir: (.+)/.exec(fs.readFileSync(path.join(wt, '.git'), 'utf8'))![1]!.trim();
    const o = await runner.run(`echo x > ${gitdir}/planted; echo x > ${fx.repo}/.git/hooks/post-checkout; printf 'gitdir: /tmp/evil\\n' > .git; echo done`, { cwd: wt, timeoutMs: 60_000 });
    expect(o.output).toContain('done');
    expect(fs.existsSync(path.join(gitdir, 'planted'))).toBe(false);
    expect(fs.existsSync(path.join(fx.repo, '.git/hooks/post-checkout'))).toBe(false);
    expect(fs.readFileSync(path.join(wt, '.git'), 'utf8')).toContain(gitdir);
  });
});

describe('safeGit on a booby-trapped repo', () => {
  it('runs no hooks, fsmonitor, filters or external diff planted in the repo', async () => {
    const pwn = path.join(fx.base, 'PWNED');
    const script = path.join(fx.base, 'evil.sh');
    fs.writeFileSync(script, `#!/bin/sh\ntouch ${pwn}\ncat\n`, { mode: 0o755 });
    // As if an agent had escaped into .git: hooks, fsmonitor, a filter driver, an external diff.
    fs.writeFileSync(path.join(fx.repo, '.git/hooks/pre-commit'), `#!/bin/sh\ntouch ${pwn}\n`, { mode: 0o755 });
    fs.writeFileSync(path.join(fx.repo, '.git/hooks/post-commit'), `#!/bin/sh\ntouch ${pwn}\n`, { mode: 0o755 });
    const cfg = (k: string, v: string): void => {
      execFileSync('git', ['config', k, v], { cwd: fx.repo });
    };
    cfg('core.fsmonitor', script);
    cfg('filter.evil.clean', script);
    cfg('filter.evil.smudge', script);
    cfg('diff.external', script);
    cfg('diff.evil.textconv', script);
    fs.writeFileSync(path.join(fx.repo, '.gitattributes'), '*.txt filter=evil diff=evil\n');
    fs.writeFileSync(path.join(fx.repo, 'a.txt'), 'one\n');
    await safeGit(fx.repo, ['add', '-A']);
    await safeGit(fx.repo, ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'x']);
    fs.writeFileSync(path.join(fx.repo, 'a.txt'), 'two\n');
    await safeGit(fx.repo, ['status']);
    await safeGit(fx.repo, ['diff']);
    const ctx: ToolContext = { root: fx.repo, fs, runner: { run: () => Promise.reject(new Error('unused')) }, commandTimeoutS: 5 };
    const st = await callTool(gitStatus, {}, ctx);
    const diff = await callTool(gitDiff, {}, ctx);
    expect(st.ok).toBe(true);
    expect(diff.forModel).toContain('+two');
    expect(fs.existsSync(pwn)).toBe(false);
  });

  it('refuses to run when the .git file no longer points to the expected git dir', async () => {
    const wt = path.join(fx.base, 'wt2');
    execFileSync('git', ['worktree', 'add', '-q', '-b', 'side2', wt], { cwd: fx.repo });
    const expected = /gitdir: (.+)/.exec(fs.readFileSync(path.join(wt, '.git'), 'utf8'))![1]!.trim();
    expect((await safeGit(wt, ['status'], { expectedGitDir: expected })).exitCode).toBe(0);
    const evil = path.join(fx.base, 'evil-gitdir');
    execFileSync('git', ['init', '-q', evil]);
    fs.writeFileSync(path.join(wt, '.git'), `gitdir: ${evil}/.git\n`);
    await expect(safeGit(wt, ['status'], { expectedGitDir: expected })).rejects.toThrow(/no longer points/);
  });
});
