// safeGit keeps the repository's driver names between calls only while its config files are unchanged:
// a driver planted after the first call must still be overridden on the next one.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { driverOverrides, readsNoContent, safeGit } from '../../../src/core/sandbox/safe-git.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function repo(): { dir: string; git: (...a: string[]) => string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acia-safegit-'));
  dirs.push(dir);
  const git = (...a: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...a], { cwd: dir, encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(dir, 'a.txt'), 'a\n');
  fs.writeFileSync(path.join(dir, '.gitattributes'), '* filter=evil diff=evil\n');
  git('add', '-A');
  git('commit', '-qm', 'base');
  return { dir, git };
}

describe('driverOverrides', () => {
  it('sees a driver added to the repository config after an earlier call', async () => {
    const { dir, git } = repo();
    expect(await driverOverrides(dir)).toEqual([]);
    expect(await driverOverrides(dir)).toEqual([]); // answered from the cache
    git('config', 'filter.evil.clean', 'touch pwned; cat');
    expect(await driverOverrides(dir)).toContain('filter.evil.clean=');
    git('config', 'diff.evil.textconv', 'touch pwned; cat');
    expect(await driverOverrides(dir)).toContain('diff.evil.textconv=');
  });

  it('sees a driver in a linked worktree whose common config changes, and one behind an include', async () => {
    const { dir, git } = repo();
    const wt = path.join(dir, 'wt');
    git('worktree', 'add', '-q', wt);
    expect(await driverOverrides(wt)).toEqual([]);
    git('config', 'merge.evil.driver', 'touch pwned; true');
    expect(await driverOverrides(wt)).toContain('merge.evil.driver=false');
    const extra = path.join(dir, 'extra.cfg');
    fs.writeFileSync(extra, '');
    git('config', 'include.path', extra);
    await driverOverrides(wt);
    // Included files are not watched, so a config with an include is asked every time.
    fs.writeFileSync(extra, '[filter "inc"]\n\tclean = touch pwned\n');
    expect(await driverOverrides(wt)).toContain('filter.inc.clean=');
  });

  it('a planted clean filter does not run through safeGit once the cache holds an answer', async () => {
    const { dir, git } = repo();
    await safeGit(dir, ['status', '--porcelain']);
    const marker = path.join(dir, '..', `${path.basename(dir)}-pwned`);
    dirs.push(marker);
    git('config', 'filter.evil.clean', `touch ${marker}; cat`);
    fs.writeFileSync(path.join(dir, 'a.txt'), 'changed\n');
    await safeGit(dir, ['add', 'a.txt']);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('callers asking at the same moment share one answer, and a change made meanwhile is still seen by the next call', async () => {
    const { dir, git } = repo();
    git('config', 'filter.evil.clean', 'touch pwned; cat');
    const [a, b] = await Promise.all([driverOverrides(dir), driverOverrides(dir)]);
    expect(a).toContain('filter.evil.clean=');
    expect(b).toEqual(a);
    git('config', 'diff.evil.textconv', 'touch pwned; cat');
    expect(await driverOverrides(dir)).toContain('diff.evil.textconv=');
  });
});

describe('readsNoContent (commands run without the driver query)', () => {
  it('takes ref commands and index-only ls-files, never an ls-files that looks at the work tree', () => {
    expect(readsNoContent(['rev-parse', 'HEAD'])).toBe(true);
    expect(readsNoContent(['ls-files', '-z', '--', '.acia/runs'])).toBe(true);
    expect(readsNoContent(['ls-files', '-z', '-s', '--', '.'])).toBe(true);
    for (const flag of ['-m', '--modified', '-o', '--others', '-d', '-k', '-t', '--exclude-standard']) expect(readsNoContent(['ls-files', '-z', flag, '--', '.'])).toBe(false);
    expect(readsNoContent(['ls-files', '-z'])).toBe(false); // no `--`: a later word could be an option
    expect(readsNoContent(['status', '--porcelain'])).toBe(false);
    expect(readsNoContent(['add', 'a.txt'])).toBe(false);
  });
});

describe('a worktree another git is still adding', () => {
  /** What `git worktree add` leaves for a moment: the worktree's directory with an empty commondir. */
  const halfAdded = (dir: string): string => {
    const half = path.join(dir, '.git', 'worktrees', 'sibling');
    fs.mkdirSync(half, { recursive: true });
    fs.writeFileSync(path.join(half, 'gitdir'), path.join(dir, 'sibling', '.git') + '\n');
    fs.writeFileSync(path.join(half, 'commondir'), '');
    return half;
  };

  it('makes git fail, and safeGit runs the call again once the sibling is done', async () => {
    const { dir, git } = repo();
    const half = halfAdded(dir);
    // git itself: the add dies on the half-made sibling (this is the race parallel tasks met)
    expect(() => git('worktree', 'add', '-q', '--force', '-B', 'task', path.join(dir, 'wt1'), 'HEAD')).toThrow(/failed to read .*sibling\/commondir/);
    const seen: string[] = [];
    const r = await safeGit(dir, ['worktree', 'add', '-q', '--force', '-B', 'task', path.join(dir, 'wt1'), 'HEAD'], {
      beforeRetry: (stderr) => {
        seen.push(stderr);
        fs.writeFileSync(path.join(half, 'commondir'), '../..\n'); // the sibling's add goes on
      },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(/sibling\/commondir/);
    expect(fs.existsSync(path.join(dir, 'wt1', 'a.txt'))).toBe(true);
  });

  it('gives up after a few tries when the half-made worktree stays, and does not retry other failures', async () => {
    const { dir } = repo();
    halfAdded(dir);
    let retries = 0;
    const stuck = await safeGit(dir, ['worktree', 'add', '-q', '--force', path.join(dir, 'wt2'), 'HEAD'], { beforeRetry: () => void retries++ });
    expect(stuck.exitCode).not.toBe(0);
    expect(stuck.stderr).toMatch(/commondir/);
    expect(retries).toBe(6);
    retries = 0;
    const other = await safeGit(dir, ['rev-parse', '--verify', 'no-such-ref'], { beforeRetry: () => void retries++ });
    expect(other.exitCode).not.toBe(0);
    expect(retries).toBe(0);
  });
});
