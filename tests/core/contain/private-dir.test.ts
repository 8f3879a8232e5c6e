// A fleet worker's cache holds mirrors and clones whose git config runs commands as the worker: another
// local user must not be able to create it first, link it elsewhere, or write into it.
import { chmodSync, chownSync, mkdirSync, mkdtempSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshPrivateDir, privateDir } from '../../../src/core/contain/private-dir.js';

const base = () => mkdtempSync(join(tmpdir(), 'acia-private-'));

describe('private directories', () => {
  it('the default is a fresh directory only its owner can enter, never one someone made first', () => {
    const a = freshPrivateDir('acia-worker-');
    const b = freshPrivateDir('acia-worker-');
    expect(a).not.toBe(b);
    expect(statSync(a).mode & 0o777).toBe(0o700);
  });

  it('a missing directory is created 0700; an existing private one of ours is taken as it is', () => {
    const dir = join(base(), 'cache');
    expect(privateDir(dir, '--cache')).toBe(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(privateDir(dir, '--cache')).toBe(dir);
  });

  it('refuses a directory others can write, and a link, with one line naming the flag', () => {
    const open = join(base(), 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    expect(() => privateDir(open, '--cache')).toThrow(/^--cache .*open can be written by others \(mode 777\); give a directory of yours that nobody else can write$/);
    const link = join(base(), 'link');
    symlinkSync(base(), link);
    expect(() => privateDir(link, '--cache')).toThrow(/is not a directory \(a link\?\)/);
  });

  it.skipIf(process.getuid?.() !== 0)("refuses another user's directory, even a private one", () => {
    const theirs = join(base(), 'theirs');
    mkdirSync(theirs, { mode: 0o700 });
    chownSync(theirs, 65534, 65534);
    expect(() => privateDir(theirs, '--cache')).toThrow(/belongs to uid 65534, not to you/);
  });
});
