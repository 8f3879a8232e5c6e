import { describe, expect, it } from 'vitest';
import { resolveInRoot } from '../../../src/core/sandbox/path-guard.js';
import { memCtx } from '../tools/memfs-ctx.js';

function setup() {
  const { fs } = memCtx({ 'src/a.ts': 'a', 'docs/readme.md': 'r' });
  return fs;
}
const refused = (fn: () => unknown): void => {
  expect(fn).toThrow(expect.objectContaining({ code: 'PATH_OUTSIDE_ROOT' }) as Error);
};

describe('resolveInRoot', () => {
  it('resolves a relative path inside the root', () => {
    const fs = setup();
    expect(resolveInRoot(fs, '/repo', 'src/a.ts')).toEqual({ abs: '/repo/src/a.ts', rel: 'src/a.ts', exists: true });
  });
  it('accepts an absolute path inside the root and a path that does not exist yet', () => {
    const fs = setup();
    expect(resolveInRoot(fs, '/repo', '/repo/src/a.ts').rel).toBe('src/a.ts');
    expect(resolveInRoot(fs, '/repo', 'new/dir/file.ts')).toMatchObject({ rel: 'new/dir/file.ts', exists: false });
  });
  it('refuses .. escapes and absolute paths outside', () => {
    const fs = setup();
    refused(() => resolveInRoot(fs, '/repo', '../outside/secret.txt'));
    refused(() => resolveInRoot(fs, '/repo', 'src/../../outside/secret.txt'));
    refused(() => resolveInRoot(fs, '/repo', '/outside/secret.txt'));
    refused(() => resolveInRoot(fs, '/repo', '/etc/passwd'));
  });
  it('allows .. that stays inside', () => {
    const fs = setup();
    expect(resolveInRoot(fs, '/repo', 'src/../docs/readme.md').rel).toBe('docs/readme.md');
  });
  it('refuses a symlink to a file outside and a symlink to a directory outside', () => {
    const fs = setup();
    fs.symlinkSync('/outside/secret.txt', '/repo/link.txt');
    fs.symlinkSync('/outside', '/repo/outdir');
    refused(() => resolveInRoot(fs, '/repo', 'link.txt'));
    refused(() => resolveInRoot(fs, '/repo', 'outdir/secret.txt'));
    refused(() => resolveInRoot(fs, '/repo', 'outdir/new-file'));
  });
  it('refuses a relative symlink that climbs out and a dangling symlink pointing outside', () => {
    const fs = setup();
    fs.symlinkSync('../outside', '/repo/rel');
    fs.symlinkSync('/nowhere/x', '/repo/dangling');
    refused(() => resolveInRoot(fs, '/repo', 'rel/secret.txt'));
    refused(() => resolveInRoot(fs, '/repo', 'dangling'));
  });
  it('follows a symlink that stays inside, to its real target', () => {
    const fs = setup();
    fs.symlinkSync('src', '/repo/alias');
    expect(resolveInRoot(fs, '/repo', 'alias/a.ts')).toMatchObject({ abs: '/repo/src/a.ts', rel: 'src/a.ts' });
  });
  it('sees a symlink created after an earlier successful call', () => {
    const fs = setup();
    expect(resolveInRoot(fs, '/repo', 'later').exists).toBe(false);
    fs.symlinkSync('/outside', '/repo/later');
    refused(() => resolveInRoot(fs, '/repo', 'later'));
  });
  it('refuses .git, nested .git and any case variant', () => {
    const fs = setup();
    fs.mkdirSync('/repo/.git/hooks', { recursive: true });
    refused(() => resolveInRoot(fs, '/repo', '.git/hooks/pre-commit'));
    refused(() => resolveInRoot(fs, '/repo', '.git'));
    refused(() => resolveInRoot(fs, '/repo', 'sub/.GIT/config'));
    refused(() => resolveInRoot(fs, '/repo', 'src/../.git/config'));
  });
  it('refuses the git dir a .git file points to when it is inside the root', () => {
    const fs = setup();
    fs.mkdirSync('/repo/meta', { recursive: true });
    fs.writeFileSync('/repo/.git', 'gitdir: meta\n');
    refused(() => resolveInRoot(fs, '/repo', 'meta/config'));
  });
  it('refuses NUL bytes and symlink loops', () => {
    const fs = setup();
    refused(() => resolveInRoot(fs, '/repo', 'a\0b'));
    fs.symlinkSync('/repo/loop2', '/repo/loop1');
    fs.symlinkSync('/repo/loop1', '/repo/loop2');
    refused(() => resolveInRoot(fs, '/repo', 'loop1'));
  });
});
