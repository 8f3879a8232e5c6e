// Checkpoints in a project whose .gitignore lists the dependency paths ACIA also leaves out: git fails an
// `add -A` whose exclude pathspec names such a path, so the worktree would never be committed.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Git } from '../../src/team/git.js';

describe('Git.commitAll', () => {
  it('commits the work when .venv and coverage exist and .gitignore lists them', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'acia-stage-'));
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' });
    git('init', '-q', '-b', 'main');
    writeFileSync(join(repo, '.gitignore'), '.venv\ncoverage\nnode_modules\n');
    writeFileSync(join(repo, 'a.py'), 'x = 1\n');
    git('add', '-A');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'base');
    symlinkSync(tmpdir(), join(repo, '.venv'));
    mkdirSync(join(repo, 'coverage'));
    writeFileSync(join(repo, 'coverage', 'lcov.info'), '');
    mkdirSync(join(repo, '.nyc_output'));
    writeFileSync(join(repo, '.nyc_output', 'x.json'), '{}');
    writeFileSync(join(repo, 'a.py'), 'x = 2\n');
    writeFileSync(join(repo, 'new.py'), 'y = 1\n');
    writeFileSync(join(repo, '*'), 'a file named star\n');
    const g = new Git({ now: () => new Date('2026-01-01T00:00:00Z') });
    const commit = await g.commitAll(repo, 'attempt');
    expect(commit).not.toBeNull();
    expect(git('show', '--name-only', '--format=', 'HEAD').trim().split('\n').sort()).toEqual(['*', 'a.py', 'new.py']);
  });
});
