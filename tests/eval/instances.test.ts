// Task files: SWE-bench fields validated per line, one clear error naming file, line and field.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectAciaError } from '../helpers/failure.js';
import { goalOf, loadInstances } from '../../src/eval/instances.js';

const base = { instance_id: 'a-1', repo: 'repos/a', base_commit: 'abc1234', problem_statement: 'fix it', test_command: 'node --test' };

function taskFile(lines: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'acia-inst-'));
  writeFileSync(join(dir, 'tasks.jsonl'), lines.join('\n'));
  return dir;
}

describe('loadInstances', () => {
  it('reads SWE-bench fields, JSON-string test lists, and resolves a local repo against the task file', () => {
    const dir = taskFile([JSON.stringify({ ...base, FAIL_TO_PASS: '["t1", "t2"]', PASS_TO_PASS: ['t3'], patch: 'gold, ignored', version: '1.0' }), '']);
    const [inst] = loadInstances(dir);
    expect(inst?.FAIL_TO_PASS).toEqual(['t1', 't2']);
    expect(inst?.PASS_TO_PASS).toEqual(['t3']);
    expect(inst?.repoSource).toBe(join(dir, 'repos/a'));
    expect(inst?.setup).toEqual([]);
    expect(inst?.origin).toBe('tasks.jsonl:1');
  });

  it('keeps a URL as given', () => {
    const [inst] = loadInstances(taskFile([JSON.stringify({ ...base, repo: 'https://github.com/o/r.git' })]));
    expect(inst?.repoSource).toBe('https://github.com/o/r.git');
  });

  it('names the line and field of a bad instance', () => {
    const dir = taskFile([JSON.stringify(base), '', JSON.stringify({ ...base, instance_id: 'b', test_command: '' })]);
    expectAciaError(() => loadInstances(dir), 'INPUT_INVALID', /tasks\.jsonl:3: test_command: /);
    expectAciaError(() => loadInstances(taskFile([JSON.stringify({ ...base, FAIL_TO_PASS: '["unclosed' })])), 'INPUT_INVALID', /:1: FAIL_TO_PASS: expected a list of test names/);
    expectAciaError(() => loadInstances(taskFile(['{nope'])), 'INPUT_INVALID', /tasks\.jsonl:1: not JSON/);
    expectAciaError(() => loadInstances(taskFile([JSON.stringify({ ...base, instance_id: '../escape' })])), 'INPUT_INVALID', /instance_id: letters, digits/);
  });

  it('refuses a duplicate instance_id, an empty set and a missing path', () => {
    expectAciaError(() => loadInstances(taskFile([JSON.stringify(base), JSON.stringify(base)])), 'INPUT_INVALID', /:2: instance_id "a-1" already used at tasks\.jsonl:1/);
    expectAciaError(() => loadInstances(taskFile(['', ''])), 'INPUT_INVALID', /no instances/);
    expectAciaError(() => loadInstances('/nonexistent/tasks.jsonl'), 'FILE_NOT_FOUND', /no such task file/);
  });

  it('gives the agents the problem statement and hints, nothing else', () => {
    const [inst] = loadInstances(taskFile([JSON.stringify({ ...base, hints_text: 'look at parse()', test_patch: 'SECRET TEST' })]));
    expect(goalOf(inst!)).toBe('fix it\n\nHints:\nlook at parse()');
    expect(goalOf(inst!)).not.toContain('SECRET');
  });
});
