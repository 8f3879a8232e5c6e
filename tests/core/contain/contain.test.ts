// The containment module on its own: run ids, checked .acia access, dependency entries, host processes.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listRunIds, readRunBlob, readWikiPage, removeRunWorktrees, requireRunDir, runDirOf, writableRoots } from '../../../src/core/contain/acia-state.js';
import { checkDependencyEntry } from '../../../src/core/contain/dependency-entry.js';
import { hostEnv, hostProcess } from '../../../src/core/contain/host-process.js';
import { isRunId } from '../../../src/core/contain/run-id.js';
import { safeGit } from '../../../src/core/sandbox/safe-git.js';
import { expectAciaError } from '../../helpers/failure.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function temp(): string {
  const d = realpathSync(mkdtempSync(join(tmpdir(), 'acia-contain-')));
  dirs.push(d);
  return d;
}
function file(path: string, content = 'x'): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, content);
}

describe('run ids', () => {
  it('accepts ACIA ids and refuses paths, dot names and `..`', () => {
    expect(isRunId('20261123-070102-ab12cd')).toBe(true);
    for (const bad of ['../x', 'a/b', '.ssh', '', 'a..b', '..', `a${'b'.repeat(128)}`]) expect(isRunId(bad), bad).toBe(false);
    expectAciaError(() => runDirOf('/repo', '../../etc'), 'RUN_NOT_FOUND', /no run "..\/..\/etc" in \/repo: not a run id/);
  });
});

describe('.acia state', () => {
  it('finds a real run directory and refuses one reached through a link or holding a linked ledger', () => {
    const repo = temp();
    const outside = temp();
    file(join(repo, '.acia', 'runs', 'r1', 'ledger.jsonl'), '{}\n');
    expect(requireRunDir(repo, 'r1', { needLedger: true })).toBe(join(repo, '.acia', 'runs', 'r1'));
    expectAciaError(() => requireRunDir(repo, 'r2'), 'RUN_NOT_FOUND', /no run r2/);
    file(join(outside, 'ledger.jsonl'), 'secret\n');
    symlinkSync(outside, join(repo, '.acia', 'runs', 'r3'));
    expectAciaError(() => requireRunDir(repo, 'r3'), 'UNSAFE_REPO', /r3: it is a symbolic link/);
    mkdirSync(join(repo, '.acia', 'runs', 'r4'));
    symlinkSync(join(outside, 'ledger.jsonl'), join(repo, '.acia', 'runs', 'r4', 'ledger.jsonl'));
    expectAciaError(() => requireRunDir(repo, 'r4'), 'UNSAFE_REPO', /ledger\.jsonl: it is a symbolic link/);
    // Listing: only real directories with run-id names.
    mkdirSync(join(repo, '.acia', 'runs', '.ssh'));
    expect(listRunIds(repo)).toEqual(['r1', 'r4']);
  });

  it('refuses a .acia/runs link when listing and reads blobs and wiki pages without following links', () => {
    const repo = temp();
    const outside = temp();
    file(join(outside, 'id_rsa'), 'KEY');
    mkdirSync(join(repo, '.acia'));
    symlinkSync(outside, join(repo, '.acia', 'runs'));
    expectAciaError(() => listRunIds(repo), 'UNSAFE_REPO', /\.acia\/runs: it is a symbolic link/);
    const run = join(repo, 'run');
    mkdirSync(join(run, 'blobs'), { recursive: true });
    symlinkSync(join(outside, 'id_rsa'), join(run, 'blobs', 'a'.repeat(64)));
    expect(readRunBlob(run, `sha256:${'a'.repeat(64)}`)).toBeNull();
    expect(readRunBlob(run, '../../id_rsa')).toBeNull();
    file(join(run, 'blobs', 'b'.repeat(64)), 'ok');
    expect(readRunBlob(run, 'b'.repeat(64))?.toString()).toBe('ok');
    mkdirSync(join(repo, '.acia', 'wiki'));
    symlinkSync(join(outside, 'id_rsa'), join(repo, '.acia', 'wiki', 'index.md'));
    expectAciaError(() => readWikiPage(repo, 'index.md'), 'UNSAFE_REPO', /index\.md: it is a symbolic link/);
    expectAciaError(() => readWikiPage(repo, '../runs/x.md'), 'USAGE', /not a wiki page/);
    expect(readWikiPage(repo, 'memory/none.md')).toBeNull();
  });

  it('removes a run\'s worktrees, never through a linked .acia/worktrees', async () => {
    const repo = temp();
    const victim = temp();
    file(join(victim, 'r1', 'precious'));
    mkdirSync(join(repo, '.acia'));
    symlinkSync(victim, join(repo, '.acia', 'worktrees'));
    await expect(removeRunWorktrees(repo, 'r1')).rejects.toMatchObject({ code: 'UNSAFE_REPO' });
    expect(existsSync(join(victim, 'r1', 'precious'))).toBe(true);
    rmSync(join(repo, '.acia', 'worktrees'));
    file(join(repo, '.acia', 'worktrees', 'r1', 't1', 'f'));
    symlinkSync(victim, join(repo, '.acia', 'worktrees', 'r1', 'link'));
    expect(await removeRunWorktrees(repo, 'r1')).toBe(true);
    expect(existsSync(join(repo, '.acia', 'worktrees', 'r1'))).toBe(false);
    expect(existsSync(join(victim, 'r1', 'precious'))).toBe(true);
    expect(writableRoots(join(repo, '.acia', 'worktrees', 'r1', 't1'))).toEqual([join(repo, '.acia', 'worktrees', 'r1', 't1'), repo]);
  });
});

describe('dependency entries', () => {
  it('accepts a real entry inside the checkout and refuses links on the way, links out and entries holding a mask', () => {
    const checkout = temp();
    const home = temp();
    mkdirSync(join(checkout, 'node_modules', 'a'), { recursive: true });
    expect(checkDependencyEntry(checkout, 'node_modules')).toEqual({ ok: true, path: join(checkout, 'node_modules') });
    symlinkSync(home, join(checkout, '.venv'));
    expect(checkDependencyEntry(checkout, '.venv')).toEqual({ ok: false, reason: '.venv is a symbolic link' });
    mkdirSync(join(checkout, 'pkg'));
    symlinkSync(home, join(checkout, 'pkg', 'up'));
    expect(checkDependencyEntry(checkout, 'pkg/up/node_modules')).toMatchObject({ ok: false, reason: 'pkg/up is a symbolic link' });
    mkdirSync(join(checkout, '.yarn'));
    symlinkSync(home, join(checkout, '.yarn', 'cache'));
    expect(checkDependencyEntry(checkout, '.yarn/cache').ok).toBe(false);
    expect(checkDependencyEntry(checkout, '../x').ok).toBe(false);
    expect(checkDependencyEntry(checkout, 'node_modules', [join(checkout, 'node_modules', 'a')])).toMatchObject({ ok: false, reason: expect.stringContaining('which the sandbox hides') as string });
  });
});

describe('host processes', () => {
  it('start in a fresh empty directory with search paths that name no relative or writable place', () => {
    const repo = temp();
    const p = hostProcess({ command: 'python3', args: ['-m', 'x'], env: { PATH: `.:${repo}/bin::/usr/bin`, PYTHONPATH: `${repo}:/opt/lib`, NODE_PATH: 'node_modules', NODE_OPTIONS: '--require ./hook.js', LD_PRELOAD: `${repo}/evil.so`, PWD: repo }, writable: [repo], what: 'MCP server x' });
    try {
      expect(readdirSync(p.cwd)).toEqual([]);
      expect(p.cwd.startsWith(repo)).toBe(false);
      expect(p.env).toMatchObject({ PATH: '/usr/bin', PYTHONPATH: '/opt/lib' });
      expect(p.env.PWD).toBeUndefined();
      expect(p.env.NODE_PATH).toBeUndefined();
      expect(p.env.NODE_OPTIONS).toBeUndefined();
      expect(p.env.LD_PRELOAD).toBeUndefined();
    } finally {
      p.dispose();
    }
    expect(existsSync(p.cwd)).toBe(false);
    expectAciaError(() => hostProcess({ command: './server.py', args: [], env: {}, writable: [repo], what: 'MCP server x' }), 'CONFIG_INVALID', /MCP server x: the command \.\/server\.py is a relative path/);
    expectAciaError(() => hostProcess({ command: `${repo}/server.py`, args: [], env: {}, writable: [repo], what: 'MCP server x' }), 'CONFIG_INVALID', /an agent or the repository can write/);
    const elsewhere = temp();
    file(join(repo, 'server.py'));
    symlinkSync(join(repo, 'server.py'), join(elsewhere, 'server'));
    expectAciaError(() => hostProcess({ command: join(elsewhere, 'server'), args: [], env: {}, writable: [repo], what: 'MCP server x' }), 'CONFIG_INVALID', /an agent or the repository can write/);
    expect(hostEnv({ PATH: 'bin' }, []).PATH).toBe('/usr/local/bin:/usr/bin:/bin');
  });

  it('drop a search path that reaches a writable place through a symbolic link, either way round', () => {
    const repo = temp();
    const elsewhere = temp();
    mkdirSync(join(repo, 'node_modules', '.bin'), { recursive: true });
    // A project directory the user reaches through a link (~/code -> /data/code), on PATH by direnv or npm.
    symlinkSync(repo, join(elsewhere, 'proj'));
    const viaLink = join(elsewhere, 'proj', 'node_modules', '.bin');
    expect(hostEnv({ PATH: `${viaLink}:/usr/bin` }, [repo]).PATH).toBe('/usr/bin');
    expect(hostEnv({ PATH: `${join(repo, 'node_modules', '.bin')}:/usr/bin` }, [join(elsewhere, 'proj')]).PATH).toBe('/usr/bin');
  });

  it('run git as git -C <dir> from an empty directory, a relative dir still being the caller\'s', async () => {
    const repo = temp();
    execFileSync('git', ['init', '-q', repo]);
    const r = await safeGit(relative(process.cwd(), repo), ['rev-parse', '--show-toplevel']);
    expect(r.stdout.trim()).toBe(repo);
  });
});
