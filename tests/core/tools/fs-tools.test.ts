import { describe, expect, it } from 'vitest';
import { callTool } from '../../../src/core/tools/define-tool.js';
import { editFile, listDir, readFile, search, writeFile } from '../../../src/core/tools/tool-sets.js';
import * as nodeFs from 'node:fs';
import { MAX_WRITE_BYTES, onRealFs } from '../../../src/core/tools/fs-access.js';
import { memCtx } from './memfs-ctx.js';

describe('read_file', () => {
  it('returns numbered lines and honours offset and limit', async () => {
    const { ctx } = memCtx({ 'a.txt': 'one\ntwo\nthree\nfour\n' });
    const r = await callTool(readFile, { path: 'a.txt', offset: 2, limit: 2 }, ctx);
    expect(r.ok).toBe(true);
    expect(r.forModel).toContain('2\ttwo\n3\tthree');
    expect(r.forModel).not.toContain('one');
    expect(r.forModel).toContain('use offset=4');
  });
  it('refuses a path outside the root as an ok:false result', async () => {
    const { ctx } = memCtx({});
    const r = await callTool(readFile, { path: '../outside/secret.txt' }, ctx);
    expect(r.ok).toBe(false);
    expect(r.forModel).toMatch(/refused path.*out of the worktree/);
    expect(r.forModel).not.toContain('TOP SECRET');
  });
  it('reports a missing file and a binary file', async () => {
    const { ctx, fs } = memCtx({});
    expect((await callTool(readFile, { path: 'nope' }, ctx)).forModel).toMatch(/does not exist/);
    fs.writeFileSync('/repo/bin', Buffer.from([1, 0, 2]));
    expect((await callTool(readFile, { path: 'bin' }, ctx)).forModel).toMatch(/binary/);
  });
  it('truncates a long file in the middle and says so', async () => {
    const { ctx } = memCtx({ 'big.txt': Array.from({ length: 1500 }, (_, i) => `line ${i}`).join('\n') });
    const r = await callTool(readFile, { path: 'big.txt' }, ctx);
    expect(r.forModel).toMatch(/lines \(\d+ bytes\) cut from the middle/);
    expect(r.forModel).toContain('line 0');
    expect(r.forModel).toContain('line 1499');
  });
});

describe('write_file', () => {
  it('creates parent directories and the file', async () => {
    const { ctx, fs } = memCtx({});
    const r = await callTool(writeFile, { path: 'deep/er/x.ts', content: 'hi' }, ctx);
    expect(r.ok).toBe(true);
    expect(fs.readFileSync('/repo/deep/er/x.ts', 'utf8')).toBe('hi');
    expect(r.data).toMatchObject({ created: true, bytes: 2 });
  });
  it('refuses .git and symlinks leading outside, leaving the target untouched', async () => {
    const { ctx, fs } = memCtx({});
    fs.symlinkSync('/outside/secret.txt', '/repo/s');
    expect((await callTool(writeFile, { path: 's', content: 'pwned' }, ctx)).ok).toBe(false);
    expect((await callTool(writeFile, { path: '.git/hooks/pre-commit', content: 'x' }, ctx)).ok).toBe(false);
    expect(fs.readFileSync('/outside/secret.txt', 'utf8')).toBe('TOP SECRET');
    expect(fs.existsSync('/repo/.git/hooks/pre-commit')).toBe(false);
  });
  it('refuses content over the size cap', async () => {
    const { ctx } = memCtx({});
    const r = await callTool(writeFile, { path: 'x', content: 'a'.repeat(MAX_WRITE_BYTES + 1) }, ctx);
    expect(r.ok).toBe(false);
    expect(r.forModel).toMatch(/write limit/);
  });
  it('returns zod errors to the model for bad input', async () => {
    const { ctx } = memCtx({});
    const r = await callTool(writeFile, { path: 'x' }, ctx);
    expect(r.ok).toBe(false);
    expect(r.forModel).toMatch(/Invalid input for write_file[\s\S]*content/);
  });
});

describe('edit_file', () => {
  it('replaces a unique match and returns a unified diff', async () => {
    const { ctx, fs } = memCtx({ 'f.ts': 'a\nb\nconst x = 1;\nc\n' });
    const r = await callTool(editFile, { path: 'f.ts', old: 'const x = 1;', new: 'const x = 2;' }, ctx);
    expect(r.ok).toBe(true);
    expect(fs.readFileSync('/repo/f.ts', 'utf8')).toBe('a\nb\nconst x = 2;\nc\n');
    expect(r.forModel).toContain('--- a/f.ts');
    expect(r.forModel).toContain('-const x = 1;\n+const x = 2;');
    expect(r.forModel).toMatch(/@@ -1,\d+ \+1,\d+ @@/);
  });
  it('reports zero matches, and more than one with their lines', async () => {
    const { ctx, fs } = memCtx({ 'f.ts': 'x\ny\nx\n' });
    const none = await callTool(editFile, { path: 'f.ts', old: 'zzz', new: 'q' }, ctx);
    expect(none.forModel).toMatch(/not found/);
    const many = await callTool(editFile, { path: 'f.ts', old: 'x', new: 'q' }, ctx);
    expect(many.ok).toBe(false);
    expect(many.forModel).toMatch(/occurs 2 times.*lines 1, 3/);
    expect(fs.readFileSync('/repo/f.ts', 'utf8')).toBe('x\ny\nx\n');
  });
});

describe('list_dir', () => {
  it('lists a tree, skipping .git, node_modules and .gitignore\'d dirs', async () => {
    const { ctx } = memCtx({
      '.gitignore': 'dist/\n*.log\n',
      'src/a.ts': '',
      'src/b/c.ts': '',
      'dist/out.js': '',
      'node_modules/m/index.js': '',
      '.git/config': '',
      'debug.log': '',
    });
    const r = await callTool(listDir, { path: '.', depth: 3 }, ctx);
    expect(r.ok).toBe(true);
    expect(r.forModel).toContain('src/');
    expect(r.forModel).toContain('    c.ts');
    for (const hidden of ['dist', 'node_modules', '.git/', 'debug.log']) expect(r.forModel).not.toContain(hidden);
  });
  it('respects depth', async () => {
    const { ctx } = memCtx({ 'a/b/c/d.txt': '' });
    const r = await callTool(listDir, { path: '.', depth: 1 }, ctx);
    expect(r.forModel).toContain('a/');
    expect(r.forModel).not.toContain('b/');
  });
});

describe('search (JS fallback on memfs)', () => {
  it('finds matches with path:line and skips ignored dirs', async () => {
    const { ctx } = memCtx({ 'src/a.ts': 'foo\nbar foo\n', 'node_modules/x.js': 'foo', '.gitignore': '' });
    const r = await callTool(search, { pattern: 'fo+' }, ctx);
    expect(r.ok).toBe(true);
    expect(r.forModel).toContain('src/a.ts:1:foo');
    expect(r.forModel).toContain('src/a.ts:2:bar foo');
    expect(r.forModel).not.toContain('node_modules');
    expect(r.data).toMatchObject({ engine: 'js', matches: 2 });
  });
  it('caps results and rejects an invalid regex as an error the model can fix', async () => {
    const { ctx } = memCtx({ 'many.txt': 'hit\n'.repeat(500) });
    const r = await callTool(search, { pattern: 'hit' }, ctx);
    expect(r.data).toMatchObject({ capped: true, matches: 200 });
    const bad = await callTool(search, { pattern: '(' }, ctx);
    expect(bad.ok).toBe(false);
    expect(bad.forModel).toMatch(/invalid regular expression/);
  });
});

describe('onRealFs', () => {
  it('knows node fs in any wrapper a bundle puts around it, and memfs as not the disk', () => {
    const ctx = memCtx({}).ctx;
    expect(onRealFs({ ...ctx, fs: nodeFs })).toBe(true);
    // A CommonJS bundle hands each chunk its own copy of the namespace (rolldown's __toESM); the FIFO and
    // symlink guards (O_NONBLOCK|O_NOFOLLOW) and ripgrep must still apply.
    const wrapper = Object.defineProperties({}, Object.fromEntries(Object.keys(nodeFs).map((k) => [k, { get: () => nodeFs[k as keyof typeof nodeFs], enumerable: true }])));
    expect(onRealFs({ ...ctx, fs: wrapper as typeof nodeFs })).toBe(true);
    expect(onRealFs(ctx)).toBe(false);
  });
});
