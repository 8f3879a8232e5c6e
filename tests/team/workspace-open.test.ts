// Workspace.openRun against a repository git cannot add a worktree to: the run stops with git's own
// reason, not later with "cannot change to .../@run" from the first command that needed the directory.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { systemClock } from '../../src/core/acm/ids.js';
import { Git } from '../../src/team/git.js';
import { Workspace } from '../../src/team/workspace.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A repository with one commit, and git run in it. */
function committedRepo(): { repo: string; git: (...a: string[]) => string } {
  const repo = mkdtempSync(join(tmpdir(), 'acia-wsopen-'));
  dirs.push(repo);
  const git = (...a: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...a], { cwd: repo, encoding: 'utf8', stdio: 'pipe' }).trim();
  git('init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'a.txt'), 'a\n');
  git('add', '-A');
  git('commit', '-qm', 'base');
  return { repo, git };
}

it('says why git refused the run worktree when the add fails', async () => {
  const { repo, git } = committedRepo();
  // A registered worktree git cannot read (left half made by a git that was killed while adding it).
  const broken = join(repo, '.git', 'worktrees', 'broken');
  mkdirSync(broken, { recursive: true });
  writeFileSync(join(broken, 'gitdir'), join(repo, 'gone', '.git') + '\n');
  writeFileSync(join(broken, 'commondir'), '');
  const ws = new Workspace(new Git(systemClock), repo, 'r1', () => undefined);
  await expect(ws.openRun(git('rev-parse', 'HEAD'), true)).rejects.toThrow(/git worktree add failed for the run worktree .*@run: fatal: failed to read .*broken\/commondir/);
  // Once git can read it again, the same run opens.
  rmSync(broken, { recursive: true });
  await ws.openRun(git('rev-parse', 'HEAD'), true);
  expect(git('-C', ws.runWorktree, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('acia/r1');
  await ws.close();
});

it('resumes a run whose run worktree a killed git left registered, locked and half made', async () => {
  const { repo, git } = committedRepo();
  const base = git('rev-parse', 'HEAD');
  const first = new Workspace(new Git(systemClock), repo, 'r2', () => undefined);
  await first.openRun(base, true);
  // What `git worktree add` leaves when it is killed before its checkout: the entry still locked as
  // "initializing" (so `worktree prune` keeps it) and the directory missing, or there without its files.
  const admin = join(repo, '.git', 'worktrees', '@run');
  for (const left of ['missing', 'empty', 'unchecked out'] as const) {
    if (left === 'unchecked out') rmSync(join(first.runWorktree, 'a.txt'));
    else rmSync(first.runWorktree, { recursive: true, force: true });
    if (left === 'empty') mkdirSync(first.runWorktree);
    writeFileSync(join(admin, 'locked'), 'initializing');
    const resumed = new Workspace(new Git(systemClock), repo, 'r2', () => undefined);
    await resumed.openRun(base, false);
    expect(git('-C', resumed.runWorktree, 'rev-parse', '--abbrev-ref', 'HEAD'), left).toBe('acia/r2');
    expect(git('-C', resumed.runWorktree, 'status', '--porcelain'), left).toBe('');
    // Nothing stays locked, or the run's clean-up could not remove the worktree.
    expect(git('worktree', 'list', '--porcelain'), left).not.toMatch(/^locked/m);
  }
  await first.close();
});
