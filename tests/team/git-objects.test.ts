// Objects ACIA reads and writes without a git process each must be exactly what git would read and write:
// the tree diff lists what `git diff --name-only` lists, in its order; written objects pass `git fsck`;
// a checkpoint through the run's reader (as the workspace makes it) equals one made by plumbing.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/acm/ids.js';
import { GitBatchReader } from '../../src/core/sandbox/git-batch.js';
import { checkpointCommit } from '../../src/team/checkpoint.js';
import { Git } from '../../src/team/git.js';
import { blobSha, changedPaths, listTreePaths, objectsDirOf, writeLooseObject } from '../../src/team/git-objects.js';

const dirs: string[] = [];
const readers: GitBatchReader[] = [];
afterEach(() => {
  for (const r of readers.splice(0)) r.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function repo(): { dir: string; git: (...a: string[]) => string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acia-objects-test-'));
  dirs.push(dir);
  const git = (...a: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...a], { cwd: dir, encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  return { dir, git };
}

function write(dir: string, rel: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), text);
}

function reader(dir: string): GitBatchReader {
  const r = new GitBatchReader(dir);
  readers.push(r);
  return r;
}

describe('listTreePaths', () => {
  it('lists what git ls-tree -r --name-only lists, in the same order', async () => {
    const { dir, git } = repo();
    // Names whose order differs between "as a directory" and "as a file" (a.b sorts before a/, a0 after),
    // deep nesting, a symlink, a non-ASCII name, a space, and a gitlink (listed, not entered).
    for (const f of ['a.b', 'a/x', 'a/y/z', 'a0', 'b c/d', 'é/ü.txt', 'z']) write(dir, f, `${f}\n`);
    fs.symlinkSync('a0', path.join(dir, 'link'));
    git('add', '-A');
    git('commit', '-qm', 'one');
    git('update-index', '--add', '--cacheinfo', `160000,${git('rev-parse', 'HEAD')},sub`);
    git('commit', '-qm', 'gitlink');
    const want = execFileSync('git', ['ls-tree', '-r', '-z', '--name-only', 'HEAD'], { cwd: dir, encoding: 'utf8' }).split('\0').filter((f) => f !== '');
    expect(await listTreePaths(reader(dir), git('rev-parse', 'HEAD'))).toEqual(want);
    expect(want).toContain('sub');
    expect(await listTreePaths(reader(dir), '0'.repeat(40))).toBeNull();
  });
});

describe('changedPaths', () => {
  it('lists what git diff --name-only --ignore-submodules=all lists, in the same order', async () => {
    const { dir, git } = repo();
    for (const f of ['a', 'a-b', 'b/x', 'b/y/z', 'c', 'd/e', 'é.txt', 'keep/k']) write(dir, f, `${f}\n`);
    git('add', '-A');
    git('commit', '-qm', 'one');
    git('update-index', '--add', '--cacheinfo', `160000,${git('rev-parse', 'HEAD')},sub`);
    git('commit', '-qm', 'gitlink');
    const one = git('rev-parse', 'HEAD');
    // A file becomes a directory, a directory a file, edits deep down, a mode change, a deletion, an
    // addition, a non-ASCII name, and the gitlink moved (ignored, as --ignore-submodules=all has it).
    fs.rmSync(path.join(dir, 'a'));
    write(dir, 'a/inner', 'now a dir\n');
    fs.rmSync(path.join(dir, 'd'), { recursive: true });
    write(dir, 'd', 'now a file\n');
    write(dir, 'b/y/z', 'changed\n');
    fs.chmodSync(path.join(dir, 'c'), 0o755);
    fs.rmSync(path.join(dir, 'a-b'));
    write(dir, 'new/deep/n', 'n\n');
    write(dir, 'é.txt', 'changed\n');
    git('add', '-A');
    git('update-index', '--add', '--cacheinfo', `160000,${one},sub`);
    git('update-index', '--add', '--cacheinfo', `160000,${one},sub2`);
    git('commit', '-qm', 'two');
    const expected = git('diff', '--name-only', '-z', '--no-renames', '--ignore-submodules=all', one, 'HEAD').split('\0').filter((p) => p !== '');
    expect(expected.length).toBeGreaterThan(6);
    expect(await changedPaths(reader(dir), one, 'HEAD')).toEqual(expected);
    expect(await changedPaths(reader(dir), 'HEAD', one)).toEqual(git('diff', '--name-only', '-z', '--no-renames', '--ignore-submodules=all', 'HEAD', one).split('\0').filter((p) => p !== ''));
    expect(await changedPaths(reader(dir), one, one)).toEqual([]);
  });
});

describe('loose objects written here', () => {
  it('are valid git objects with the sha git computes', () => {
    const { dir, git } = repo();
    const bytes = Buffer.from('hello\0world\n');
    const objects = path.join(dir, '.git', 'objects');
    const sha = writeLooseObject(objects, 'blob', bytes);
    expect(sha).toBe(blobSha(bytes));
    expect(execFileSync('git', ['hash-object', '--stdin'], { cwd: dir, input: bytes, encoding: 'utf8' }).trim()).toBe(sha);
    expect(git('cat-file', '-t', sha)).toBe('blob');
    expect(writeLooseObject(objects, 'blob', bytes)).toBe(sha); // already there: left alone
    expect(git('fsck', '--strict', '--no-dangling')).toBe('');
  });

  it('the reader answers null for a missing name and starts again after close', async () => {
    const { dir, git } = repo();
    write(dir, 'f', 'f\n');
    git('add', '-A');
    git('commit', '-qm', 'one');
    const r = reader(dir);
    expect(await r.read('refs/heads/nope')).toBeNull();
    expect((await r.read('refs/heads/main'))?.type).toBe('commit');
    r.close();
    expect((await r.read('HEAD:f'))?.content.toString()).toBe('f\n');
  });
});

describe('a checkpoint through the run reader in a linked worktree', () => {
  it('commits the same tree as the plumbing path, leaves the index on it and keeps the repository sound', async () => {
    const { dir, git } = repo();
    write(dir, 'src/a.js', 'a\n');
    write(dir, 'gone.txt', 'gone\n');
    git('add', '-A');
    git('commit', '-qm', 'base');
    const wt = path.join(dir, 'wt');
    git('worktree', 'add', '-q', '-b', 'task', wt);
    const gitDir = fs.realpathSync(path.join(dir, '.git', 'worktrees', 'wt'));
    write(wt, 'src/a.js', 'changed\n');
    write(wt, 'src/new/b.js', 'b\n');
    fs.rmSync(path.join(wt, 'gone.txt'));
    const r = reader(dir);
    const commit = await checkpointCommit(new Git(systemClock), wt, 'ckpt\n\nbody', gitDir, [], { reader: r, objectsDir: objectsDirOf(gitDir) });
    if (commit === null) throw new Error('no checkpoint commit');
    expect(commit).toMatch(/^[0-9a-f]{40}$/);
    expect(git('rev-parse', 'refs/heads/task')).toBe(commit);
    expect(git('ls-tree', '-r', '--name-only', commit)).toBe('src/a.js\nsrc/new/b.js');
    expect(git('show', `${commit}:src/a.js`)).toBe('changed');
    expect(git('log', '-1', '--format=%an <%ae>|%P|%B', commit)).toBe(`ACIA <acia@localhost>|${git('rev-parse', 'main')}|ckpt\n\nbody`);
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: wt, encoding: 'utf8' })).toBe('');
    expect(git('fsck', '--strict', '--no-dangling')).toBe('');
    expect(await changedPaths(r, 'main', commit)).toEqual(['gone.txt', 'src/a.js', 'src/new/b.js']);
    // Nothing changed since: no commit.
    expect(await checkpointCommit(new Git(systemClock), wt, 'again', gitDir, [], { reader: r, objectsDir: objectsDirOf(gitDir) })).toBeNull();
  });
});
