// Installed dependencies in task worktrees: found in the checkout (npm/pnpm/yarn workspaces, virtualenvs),
// linked into the worktree, visible read-only in the sandbox, and never committed by a checkpoint.
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BwrapRunner } from '../../../src/core/sandbox/bwrap-runner.js';
import { findDependencyDirs, linkDependencies } from '../../../src/core/sandbox/deps.js';
import { Git } from '../../../src/team/git.js';
import { sandboxAvailable } from '../../helpers/sandbox-available.js';

// Not under /tmp: the sandbox's /tmp is private, and checkouts live elsewhere.
const base = mkdtempSync(join(process.cwd(), '.test-deps-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function write(path: string, text: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
}

/** A checkout with a root package, a workspace package, installed node_modules (one pnpm-style link) and a venv. */
function makeCheckout(name: string): { repo: string; git: (...a: string[]) => string } {
  const repo = join(base, name);
  mkdirSync(repo);
  const git = (...a: string[]) => execFileSync('git', a, { cwd: repo, encoding: 'utf8' });
  git('init', '-q', '-b', 'main');
  write(join(repo, 'package.json'), '{"name":"root","workspaces":["packages/*"]}\n');
  write(join(repo, 'packages/a/package.json'), '{"name":"a"}\n');
  write(join(repo, 'pyproject.toml'), '[project]\nname="p"\n');
  write(join(repo, '.gitignore'), 'node_modules/\n.venv/\n');
  git('add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'base');
  write(join(repo, 'node_modules/left-pad/index.js'), 'module.exports = "LEFT-PAD";\n');
  write(join(repo, 'node_modules/.pnpm/b@1/node_modules/b/index.js'), 'module.exports = "B";\n');
  symlinkSync('.pnpm/b@1/node_modules/b', join(repo, 'node_modules/b'));
  write(join(repo, 'node_modules/.bin/hello'), '#!/bin/sh\necho HELLO-BIN\n');
  execFileSync('chmod', ['+x', join(repo, 'node_modules/.bin/hello')]);
  write(join(repo, 'node_modules/.cache/old'), 'user cache\n');
  write(join(repo, 'packages/a/node_modules/only-a/index.js'), 'module.exports = "ONLY-A";\n');
  write(join(repo, '.venv/pyvenv.cfg'), 'home = /usr/bin\n');
  write(join(repo, '.venv/lib/site.txt'), 'VENV-FILE\n');
  // A node_modules in a directory without a manifest is not a package's: not linked.
  write(join(repo, 'docs/node_modules/x/index.js'), '');
  return { repo, git };
}

describe('findDependencyDirs', () => {
  it('finds node_modules beside every manifest and virtualenvs with a pyvenv.cfg', () => {
    const { repo } = makeCheckout('find');
    const dirs = findDependencyDirs(repo).map((d) => `${d.kind}:${d.rel}`);
    expect(dirs.sort()).toEqual(['node_modules:node_modules', 'node_modules:packages/a/node_modules', 'venv:.venv']);
  });
});

describe('linkDependencies and checkpoints', () => {
  it('links per node_modules entry (not the caches) and the venv, and a checkpoint commits none of it', async () => {
    const { repo, git } = makeCheckout('link');
    const wt = join(repo, '.acia/worktrees/r1/t1');
    git('worktree', 'add', '-q', '-b', 't1', wt);
    const report = linkDependencies(repo, wt);
    expect(report.linked.sort()).toEqual(['.venv', 'node_modules', 'packages/a/node_modules']);
    expect(lstatSync(join(wt, 'node_modules')).isDirectory()).toBe(true);
    expect(readlinkSync(join(wt, 'node_modules/left-pad'))).toBe(join(repo, 'node_modules/left-pad'));
    expect(existsSync(join(wt, 'node_modules/.cache'))).toBe(false);
    expect(readFileSync(join(wt, 'node_modules/b/index.js'), 'utf8')).toContain('"B"');
    expect(lstatSync(join(wt, '.venv')).isSymbolicLink()).toBe(true);

    // Byproducts of a test run, in a repository whose .gitignore lists none of them.
    write(join(wt, 'node_modules/.cache/nyc/x.json'), '{}');
    write(join(wt, '.nyc_output/out.json'), '{}');
    write(join(wt, 'coverage/index.html'), '<p>');
    write(join(wt, 'src/__pycache__/m.pyc'), 'pyc');
    write(join(wt, '.pytest_cache/v/x'), 'x');
    write(join(wt, 'src/coverage/keep.ts'), 'export const kept = 1;\n');
    write(join(wt, 'index.js'), 'module.exports = 1;\n');
    writeFileSync(join(repo, '.gitignore'), '');
    const g = new Git({ now: () => new Date('2026-01-01T00:00:00Z') });
    const commit = await g.commitAll(wt, 'attempt');
    expect(commit).not.toBeNull();
    const files = (await g.run(wt, ['show', '--name-only', '--format=', 'HEAD'])).stdout.split('\n').sort();
    expect(files).toEqual(['index.js', 'src/coverage/keep.ts']);
  });
});

describe('linkDependencies on a hostile worktree', () => {
  it('makes nothing through a committed symlink, and leaves a tracked node_modules link alone', () => {
    const { repo, git } = makeCheckout('hostile');
    const outside = join(base, 'outside-target');
    mkdirSync(outside);
    // An agent committed packages/a as a link out of the worktree, and packages/b/node_modules as one.
    rmSync(join(repo, 'packages/a'), { recursive: true, force: true });
    symlinkSync(outside, join(repo, 'packages/a'));
    write(join(repo, 'packages/b/package.json'), '{"name":"b"}\n');
    symlinkSync(outside, join(repo, 'packages/b/node_modules'));
    git('add', '-A');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'evil');
    const wt = join(repo, '.acia/worktrees/r1/t1');
    git('worktree', 'add', '-q', '-b', 't1', wt);
    // What the user's checkout has installed (from before the agent's commits).
    const dirs = [
      { rel: 'packages/a/node_modules', kind: 'node_modules' as const },
      { rel: 'packages/b/node_modules', kind: 'node_modules' as const },
      { rel: 'node_modules', kind: 'node_modules' as const },
    ];
    mkdirSync(join(outside, 'node_modules', 'x'), { recursive: true });
    const report = linkDependencies(repo, wt, dirs);
    expect(report.linked).toEqual(['node_modules']);
    // Nothing was created in the link's target.
    expect(readdirSync(outside)).toEqual(['node_modules']);
    expect(readdirSync(join(outside, 'node_modules'))).toEqual(['x']);
  });
});

describe.skipIf(!sandboxAvailable())('dependencies in the sandbox', () => {
  it('are usable, read-only, and tools can still write their own cache entries', async () => {
    const { repo, git } = makeCheckout('sandbox');
    const wt = join(repo, '.acia/worktrees/r1/t1');
    git('worktree', 'add', '-q', '-b', 't1', wt);
    const runner = new BwrapRunner({ root: wt });
    runner.layDependencies();
    const run = (cmd: string, cwd = wt) => runner.run(cmd, { cwd, timeoutMs: 10_000 });

    const use = await run(`node -e 'console.log(require("left-pad"), require("b"))' && PATH=node_modules/.bin:$PATH hello && cat .venv/lib/site.txt && cd packages/a && node -e 'console.log(require("only-a"))'`);
    expect(use.output).toContain('LEFT-PAD B');
    expect(use.output).toContain('HELLO-BIN');
    expect(use.output).toContain('VENV-FILE');
    expect(use.output).toContain('ONLY-A');
    expect(use.exitCode).toBe(0);

    for (const attack of [
      'echo pwned > node_modules/left-pad/index.js',
      `echo pwned > ${repo}/node_modules/left-pad/index.js`,
      'rm -rf node_modules/left-pad/',
      'echo pwned > .venv/lib/site.txt',
      `echo pwned > ${repo}/.venv/lib/site.txt`,
      'echo pwned > /tmp/.acia-originals/node_modules/left-pad/index.js',
      'touch /tmp/.acia-originals/node_modules/new-file',
      'echo pwned > /tmp/.acia-originals/pyproject.toml',
    ]) {
      const r = await run(attack);
      expect(r.exitCode, attack).not.toBe(0);
    }
    expect(readFileSync(join(repo, 'node_modules/left-pad/index.js'), 'utf8')).toContain('LEFT-PAD');
    expect(readFileSync(join(repo, '.venv/lib/site.txt'), 'utf8')).toBe('VENV-FILE\n');

    // The checkout's path shows the task's worktree: a new entry there is the task's, not the user's.
    expect((await run(`touch ${repo}/node_modules/new-file && pwd`)).output.trim()).toBe(repo);
    expect(existsSync(join(wt, 'node_modules/new-file'))).toBe(true);
    expect(existsSync(join(repo, 'node_modules/new-file'))).toBe(false);

    // A cache entry is the task's own, in its worktree; the user's cache is untouched and unseen.
    const cache = await run('mkdir -p node_modules/.cache/nyc && echo mine > node_modules/.cache/nyc/x && ls node_modules/.cache');
    expect(cache.exitCode).toBe(0);
    expect(readFileSync(join(wt, 'node_modules/.cache/nyc/x'), 'utf8')).toBe('mine\n');
    expect(readFileSync(join(repo, 'node_modules/.cache/old'), 'utf8')).toBe('user cache\n');
    expect(existsSync(join(repo, 'node_modules/.cache/nyc'))).toBe(false);
    // The rest of the checkout stays hidden: at its path is the task's tree, without the untracked files.
    writeFileSync(join(repo, '.env'), 'SECRET=hunter2\n');
    const hidden = await run(`ls ${repo}/docs 2>&1; cat ${repo}/.env 2>&1; ls -a ${repo}`);
    expect(hidden.output).not.toContain('hunter2');
    expect(hidden.output).not.toContain('.acia');
    expect(hidden.output).toContain('pyproject.toml');
  });
});
