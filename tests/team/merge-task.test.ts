import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { conflictHunks, filesWithMarkers, readConflictHunks } from '../../src/team/merge-task.js';
import { sharedFiles } from '../../src/team/planning.js';
import type { PlanSet } from '../../src/core/acm/contracts.js';

const conflicted = ['a', 'b', 'c', '<<<<<<< HEAD', 'ours', '=======', 'theirs', '>>>>>>> acia-tasks/r/t2', 'd', 'e', 'f', 'g', 'h'].join('\n');

describe('conflict hunks', () => {
  it('keeps each hunk with three lines of context and names the file and lines', () => {
    const h = conflictHunks('src/x.js', conflicted);
    expect(h.split('\n')[0]).toBe('--- src/x.js lines 1-11');
    expect(h).toContain('<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> acia-tasks/r/t2\nd\ne\nf');
    expect(h).not.toContain('\ng');
    expect(conflictHunks('y', 'no conflict\n')).toBe('');
  });

  it('reads only regular files: a conflicted symlink never pulls a host file into a prompt', async () => {
    const root = mkdtempSync(join(tmpdir(), 'acia-hunks-'));
    mkdirSync(join(root, 'src'));
    writeFileSync(join(root, 'src', 'x.js'), conflicted);
    symlinkSync('/etc/passwd', join(root, 'link'));
    const text = await readConflictHunks(root, ['src/x.js', 'link', 'gone.js']);
    expect(text).toContain('--- src/x.js lines 1-11');
    expect(text).toContain('--- link: not a regular file (a symlink)');
    expect(text).toContain('--- gone.js: deleted on one side');
    expect(text).not.toContain('root:');
    expect(await filesWithMarkers(root, ['src/x.js', 'link', 'gone.js'])).toEqual(['src/x.js']);
    writeFileSync(join(root, 'src', 'x.js'), 'resolved\n// a line of ======= inside text stays fine\n');
    expect(await filesWithMarkers(root, ['src/x.js'])).toEqual([]);
  });
});

describe('sharedFiles (what the PM is told)', () => {
  const plan = (edges: { from: string; to: string }[]): PlanSet =>
    ({
      goalId: 'g',
      contextRef: 'c',
      selection: { method: 'llm', chosenPlanId: 'p', rationale: 'r' },
      plans: [
        {
          id: 'p',
          goalId: 'g',
          contextRef: 'c',
          capabilityMapVersion: 'acia-caps@1',
          rationale: 'r',
          joins: [],
          edges,
          tasks: [
            { id: 't1', capability: 'dev.implement', input: { instructions: 'x', files: ['src/index.js', 'a.js'] }, verification: [] },
            { id: 't2', capability: 'dev.implement', input: { instructions: 'y', files: ['src/index.js', 'b.js'] }, verification: [] },
            { id: 't3', capability: 'qa.verify', input: {}, verification: [] },
          ],
        },
      ],
    }) as unknown as PlanSet;

  it('names parallel tasks that declare the same file', () => {
    const notes = sharedFiles(plan([{ from: 't1', to: 't3' }, { from: 't2', to: 't3' }]));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain('tasks t1 and t2 may run at the same time and both change src/index.js');
  });

  it('says nothing when an edge (direct or through other tasks) orders them', () => {
    expect(sharedFiles(plan([{ from: 't1', to: 't2' }]))).toEqual([]);
  });
});
