// Checkpoints built with plumbing: same tree git add -A would give for ordinary content, nothing read
// through a symlinked directory, nothing of a nested repository, .acia/ and gitlinks left as they were.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/acm/ids.js';
import { checkpointCommit } from '../../src/team/checkpoint.js';
import { Git } from '../../src/team/git.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function repo(): { dir: string; git: (...a: string[]) => string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acia-ckpt-test-'));
  dirs.push(dir);
  const git = (...a: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...a], { cwd: dir, encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(dir, '.gitignore'), 'ignored/\n');
  fs.writeFileSync(path.join(dir, 'keep.txt'), 'keep\n');
  fs.writeFileSync(path.join(dir, 'gone.txt'), 'gone\n');
  fs.mkdirSync(path.join(dir, 'd'));
  fs.writeFileSync(path.join(dir, 'd', 'inner.txt'), 'inner\n');
  fs.mkdirSync(path.join(dir, '.acia'));
  fs.writeFileSync(path.join(dir, '.acia', 'config.json'), '{}\n');
  git('add', '-A');
  git('commit', '-qm', 'base');
  git('update-index', '--add', '--cacheinfo', `160000,${git('rev-parse', 'HEAD')},sub`);
  git('commit', '-qm', 'gitlink');
  return { dir, git };
}

describe('checkpointCommit', () => {
  it('commits edits, deletions, new files, modes and symlinks; skips ignored, FIFOs and .acia changes', async () => {
    const { dir, git } = repo();
    fs.writeFileSync(path.join(dir, 'keep.txt'), 'changed\n');
    fs.rmSync(path.join(dir, 'gone.txt'));
    fs.writeFileSync(path.join(dir, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
    fs.symlinkSync('keep.txt', path.join(dir, 'link'));
    fs.writeFileSync(path.join(dir, '"quoted\\057name'), 'odd\n');
    fs.mkdirSync(path.join(dir, 'ignored'));
    fs.writeFileSync(path.join(dir, 'ignored', 'x'), 'x');
    fs.writeFileSync(path.join(dir, '.acia', 'config.json'), '{"sandbox":"off"}\n');
    fs.writeFileSync(path.join(dir, '.acia', 'planted.json'), '{}\n');
    execFileSync('mkfifo', [path.join(dir, 'fifo')]);
    const commit = await checkpointCommit(new Git(systemClock), dir, 'ckpt');
    expect(commit).toMatch(/^[0-9a-f]{40}$/);
    expect(git('rev-parse', 'HEAD')).toBe(commit);
    const tree = git('ls-tree', '-r', 'HEAD');
    expect(tree).toMatch(/100755 blob \S+\trun\.sh/);
    expect(tree).toMatch(/120000 blob \S+\tlink/);
    expect(tree).toMatch(/160000 commit \S+\tsub/);
    expect(tree).not.toContain('gone.txt');
    expect(tree).not.toContain('ignored/');
    expect(tree).not.toContain('fifo');
    expect(tree).not.toContain('planted.json');
    expect(git('show', 'HEAD:keep.txt')).toBe('changed');
    expect(git('show', 'HEAD:.acia/config.json')).toBe('{}');
    expect(git('show', 'HEAD:"quoted\\057name')).toBe('odd'); // stored under its own name, not C-unquoted
    expect(git('status', '--porcelain', '--', 'keep.txt', 'run.sh')).toBe(''); // the index follows
    expect(await checkpointCommit(new Git(systemClock), dir, 'again')).toBeNull();
  });

  it('reads nothing through a directory swapped for a symlink, and removes nested repositories', async () => {
    const { dir, git } = repo();
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'acia-ckpt-outside-'));
    dirs.push(outside);
    fs.writeFileSync(path.join(outside, 'inner.txt'), 'HOST SECRET\n');
    fs.rmSync(path.join(dir, 'd'), { recursive: true });
    fs.symlinkSync(outside, path.join(dir, 'd'));
    fs.mkdirSync(path.join(dir, 'sub'));
    execFileSync('git', ['init', '-q'], { cwd: path.join(dir, 'sub') });
    fs.mkdirSync(path.join(dir, 'nested', 'deep'), { recursive: true });
    execFileSync('git', ['init', '-q'], { cwd: path.join(dir, 'nested', 'deep') });
    fs.writeFileSync(path.join(dir, 'nested', 'deep', 'f.txt'), 'f\n');
    await checkpointCommit(new Git(systemClock), dir, 'ckpt');
    expect(fs.existsSync(path.join(dir, 'sub', '.git'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'nested', 'deep', '.git'))).toBe(false);
    expect(fs.existsSync(path.join(dir, '.git'))).toBe(true);
    const all = git('log', '-p', 'HEAD');
    expect(all).not.toContain('HOST SECRET');
    expect(git('show', 'HEAD:nested/deep/f.txt')).toBe('f');
    expect(git('ls-tree', 'HEAD', 'd')).toMatch(/^120000 /); // the link itself, as git add -A would
  });
});
