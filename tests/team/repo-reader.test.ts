import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/acm/ids.js';
import { Git } from '../../src/team/git.js';
import { detectTestCommandInGit, gitReader } from '../../src/team/repo-reader.js';
import { GitBatchReader } from '../../src/core/sandbox/git-batch.js';

let repo: string;
let commit: string;
beforeAll(() => {
  repo = mkdtempSync(join(tmpdir(), 'acia-reader-'));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
  git('init', '-q');
  mkdirSync(join(repo, 'pkg'));
  writeFileSync(join(repo, 'README.md'), 'héllo\nwörld\n');
  writeFileSync(join(repo, 'pkg', 'AGENTS.md'), 'use tabs\n');
  writeFileSync(join(repo, 'café.txt'), '');
  writeFileSync(join(repo, 'bin.dat'), Buffer.from([0, 1, 2, 10, 255, 10]));
  writeFileSync(join(repo, 'package.json'), JSON.stringify({ scripts: { test: 'vitest run' } }));
  git('add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'init');
  commit = git('rev-parse', 'HEAD');
  // The working tree moves on; the reader must still see the commit.
  writeFileSync(join(repo, 'README.md'), 'changed\n');
});
afterAll(() => rmSync(repo, { recursive: true, force: true }));

// Both ways of reading: a git process per read, and the run's cat-file pipe (the workspace's reader).
const objects: GitBatchReader[] = [];
afterAll(() => objects.forEach((o) => o.close()));
const ways = {
  processes: () => gitReader(new Git(systemClock), repo, commit),
  'the batch pipe': () => {
    const o = new GitBatchReader(repo);
    objects.push(o);
    return gitReader(new Git(systemClock), repo, commit, o);
  },
};

describe.each(Object.entries(ways))('gitReader through %s', (_, make) => {
  it('lists the commit tree with raw (unquoted) names and reads many files in one go', async () => {
    const reader = make();
    expect((await reader.listFiles()).sort()).toEqual(['README.md', 'bin.dat', 'café.txt', 'package.json', 'pkg/AGENTS.md']);
    const texts = await reader.readTexts!(['README.md', 'missing.md', 'bin.dat', 'pkg/AGENTS.md', 'café.txt', 'pkg'], 1000);
    expect(texts.get('README.md')).toBe('héllo\nwörld\n');
    expect(texts.get('missing.md')).toBeNull();
    expect(texts.get('bin.dat')).toBe('\u0000\u0001\u0002\n\ufffd\n'); // byte counts kept the parse in step
    expect(texts.get('pkg/AGENTS.md')).toBe('use tabs\n');
    expect(texts.get('café.txt')).toBe('');
    expect(texts.get('pkg')).toBeNull(); // a tree, not a file
    expect(await reader.readText('README.md', 3)).toBe('hél');
  });

  it('detects the test command from the commit, not the working tree', async () => {
    expect(await detectTestCommandInGit(make())).toBe('npm test --');
  });
});
