// Class 1: host-side git over an agent's worktree must never run a driver the agent or the repository wrote.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sandboxAvailable } from '../helpers/sandbox-available.js';
import { CLI, makeFixture, type Fixture } from './fixture.js';
import { gitIn, runAttack } from './run-attack.js';

const sandboxed = sandboxAvailable() && fs.existsSync(CLI);
let fx: Fixture;
afterEach(() => fx.cleanup());

describe.skipIf(!sandboxed)('host git runs nothing the agent or the repository wrote', () => {
  it('a nested repository the agent builds at a gitlink path does not run its clean filter on the host', async () => {
    fx = makeFixture();
    // The hostile clone carries a submodule entry (a gitlink) at vendor/lib, never initialised.
    const head = gitIn(fx.repo, 'rev-parse', 'HEAD');
    gitIn(fx.repo, 'update-index', '--add', '--cacheinfo', `160000,${head},vendor/lib`);
    gitIn(fx.repo, 'commit', '-qm', 'add submodule');
    const marker = path.join(fx.outside, 'pwned-nested');
    const build = [
      'mkdir -p vendor/lib && cd vendor/lib && git init -q',
      `git config filter.y.clean "touch ${marker}; cat"`,
      'echo "* filter=y" > .gitattributes && echo a > f && git add f .gitattributes',
      'git -c user.name=a -c user.email=a@a commit -qm x && echo b > f && echo built',
    ].join(' && ');
    const r = await runAttack(fx, [[{ name: 'run_command', input: { command: build } }], [{ name: 'git_status', input: {} }], [{ name: 'git_diff', input: {} }]]);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    expect(fs.existsSync(marker)).toBe(false);
    // The run branch carries no nested repository the agent made.
    const tree = gitIn(fx.repo, 'ls-tree', '-r', 'acia/' + (fs.readdirSync(path.join(fx.repo, '.acia', 'runs'))[0] ?? ''));
    expect(tree).toContain('160000 commit');
    expect(tree).not.toContain('vendor/lib/f');
  });

  it('drivers in the repository config do not run when named in a subdirectory .gitattributes or info/attributes', async () => {
    fx = makeFixture();
    fs.mkdirSync(path.join(fx.repo, 'sub'));
    fs.writeFileSync(path.join(fx.repo, 'sub', '.gitattributes'), '* filter=evil diff=evil merge=evil\n');
    fs.writeFileSync(path.join(fx.repo, 'sub', 'a.txt'), 'one\n');
    gitIn(fx.repo, 'add', '-A');
    gitIn(fx.repo, 'commit', '-qm', 'sub');
    const marker = (what: string) => path.join(fx.outside, `pwned-${what}`);
    // The hostile clone's own .git/config and info/attributes (written after the commit, as a clone would ship them).
    const cfg = (k: string, v: string) => gitIn(fx.repo, 'config', k, v);
    cfg('filter.evil.clean', `touch ${marker('clean')}; cat`);
    cfg('filter.evil.smudge', `touch ${marker('smudge')}; cat`);
    cfg('filter.evil.required', 'false');
    cfg('diff.evil.textconv', `touch ${marker('textconv')}; cat`);
    cfg('merge.evil.driver', `touch ${marker('merge')}; true`);
    cfg('filter.info.clean', `touch ${marker('info')}; cat`);
    fs.mkdirSync(path.join(fx.repo, '.git', 'info'), { recursive: true });
    fs.writeFileSync(path.join(fx.repo, '.git', 'info', 'attributes'), 'top.txt filter=info\n');
    const r = await runAttack(fx, [
      [
        { name: 'write_file', input: { path: 'sub/a.txt', content: 'two\n' } },
        { name: 'write_file', input: { path: 'top.txt', content: 'top\n' } },
      ],
      [{ name: 'git_diff', input: {} }],
      [{ name: 'git_status', input: {} }],
    ]);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    expect(fs.readdirSync(fx.outside).filter((f) => f.startsWith('pwned'))).toEqual([]);
    // The work itself still lands, byte for byte (no filter applied either way).
    const branch = `acia/${fs.readdirSync(path.join(fx.repo, '.acia', 'runs'))[0] ?? ''}`;
    expect(gitIn(fx.repo, 'show', `${branch}:sub/a.txt`)).toBe('two');
    expect(gitIn(fx.repo, 'show', `${branch}:top.txt`)).toBe('top');
  });

  it('--include-uncommitted snapshots the checkout without running its filters or entering its submodules', async () => {
    fx = makeFixture();
    fs.writeFileSync(path.join(fx.repo, '.gitattributes'), '*.txt filter=evil\n');
    fs.writeFileSync(path.join(fx.repo, 'a.txt'), 'one\n');
    gitIn(fx.repo, 'add', '-A');
    gitIn(fx.repo, 'commit', '-qm', 'attrs');
    const marker = path.join(fx.outside, 'pwned-snapshot');
    gitIn(fx.repo, 'config', 'filter.evil.clean', `touch ${marker}; cat`);
    fs.writeFileSync(path.join(fx.repo, 'a.txt'), 'uncommitted\n');
    fs.writeFileSync(path.join(fx.repo, 'new.txt'), 'untracked\n');
    const r = await runAttack(fx, [[{ name: 'read_file', input: { path: 'a.txt' } }]], { args: ['--include-uncommitted'] });
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    expect(fs.existsSync(marker)).toBe(false);
    const branch = `acia/${fs.readdirSync(path.join(fx.repo, '.acia', 'runs'))[0] ?? ''}`;
    expect(gitIn(fx.repo, 'show', `${branch}:a.txt`)).toBe('uncommitted');
    expect(gitIn(fx.repo, 'show', `${branch}:new.txt`)).toBe('untracked');
    expect(fs.readFileSync(path.join(fx.repo, 'a.txt'), 'utf8')).toBe('uncommitted\n'); // the checkout is untouched
  });
}, 120_000); // each case drives whole acia runs; a loaded machine makes them slow
