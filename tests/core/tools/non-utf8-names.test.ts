// A file name that is not valid UTF-8 must not break a directory walk (list_dir, search's JS fallback).
import * as nodeFs from 'node:fs';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { callTool } from '../../../src/core/tools/define-tool.js';
import { listDir } from '../../../src/core/tools/list-dir.js';
import { search } from '../../../src/core/tools/search.js';
import type { ToolContext } from '../../../src/core/tools/types.js';
import { FakeRunner } from './memfs-ctx.js';

function repoWithLatin1Name(): string {
  const root = mkdtempSync(join(tmpdir(), 'acia-names-'));
  writeFileSync(join(root, 'plain.txt'), 'needle here\n');
  writeFileSync(Buffer.concat([Buffer.from(`${root}/`), Buffer.from('caf\xe9.txt', 'latin1')]), 'needle too\n');
  return root;
}

describe('non-UTF-8 file names', () => {
  it('list_dir lists the other entries and marks the unreadable name', async () => {
    const root = repoWithLatin1Name();
    const r = await callTool(listDir, { path: '.' }, { root, fs: nodeFs, runner: new FakeRunner(), commandTimeoutS: 5 });
    expect(r.ok, r.forModel).toBe(true);
    expect(r.forModel).toContain('plain.txt');
    expect(r.forModel).toContain('caf\uFFFD.txt  [name is not valid UTF-8: tools cannot open it]');
  });

  it("search's JS walk skips the unreadable name and still finds the other matches", async () => {
    const root = repoWithLatin1Name();
    // An fs whose openSync is not node's own is not the disk (onRealFs), so search takes its JS path
    // instead of ripgrep, over the same files.
    const ctx: ToolContext = { root, fs: { ...nodeFs, openSync: (...a: Parameters<typeof nodeFs.openSync>) => nodeFs.openSync(...a) }, runner: new FakeRunner(), commandTimeoutS: 5 };
    const r = await callTool(search, { pattern: 'needle' }, ctx);
    expect(r.ok, r.forModel).toBe(true);
    expect(r.forModel).toContain('plain.txt:1:needle here');
    expect(r.data).toMatchObject({ engine: 'js', matches: 1 });
  });
});
