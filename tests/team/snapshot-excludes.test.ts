// --include-uncommitted snapshots the working tree; installed dependencies and test byproducts stay out
// of it even when the repository's .gitignore does not list them.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Git, snapshotWorkingTree } from '../../src/team/git.js';

const base = mkdtempSync(join(tmpdir(), 'acia-snapshot-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('snapshotWorkingTree', () => {
  it('leaves node_modules, .venv, .nyc_output, coverage and __pycache__ out', async () => {
    const repo = join(base, 'repo');
    mkdirSync(repo);
    const sh = (...a: string[]) => execFileSync('git', a, { cwd: repo, encoding: 'utf8' }).trim();
    sh('init', '-q', '-b', 'main');
    writeFileSync(join(repo, 'a.js'), '1\n');
    sh('add', '-A');
    sh('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'base');
    for (const f of ['node_modules/x/index.js', '.venv/pyvenv.cfg', '.nyc_output/o.json', 'coverage/index.html', 'src/__pycache__/m.pyc', 'src/new.js']) {
      mkdirSync(join(repo, f, '..'), { recursive: true });
      writeFileSync(join(repo, f), 'x\n');
    }
    writeFileSync(join(repo, 'a.js'), '2\n');
    const g = new Git({ now: () => new Date('2026-01-01T00:00:00Z') });
    const commit = await snapshotWorkingTree(g, repo, sh('rev-parse', 'HEAD'), join(base, 'index.tmp'));
    expect(sh('ls-tree', '-r', '--name-only', commit).split('\n').sort()).toEqual(['a.js', 'src/new.js']);
  });
});
