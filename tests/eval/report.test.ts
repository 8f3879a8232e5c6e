// Per-test outcomes from runner output, the report's statistics, and the model name in predictions.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseTestOutcomes, statusOf } from '../../src/eval/test-results.js';
import { buildReport, compareEvals, distribution, renderMarkdown, writeOutputs } from '../../src/eval/report.js';
import { instanceModelSpec, modelNameOf } from '../../src/eval/run-eval.js';
import type { InstanceResult } from '../../src/eval/results.js';

describe('parseTestOutcomes', () => {
  it('reads TAP, with skips left out and a failure anywhere winning', () => {
    const out = ['TAP version 13', 'ok 1 - parses whole units', 'not ok 2 - parses decimals', '    ok 1 - nested one', 'ok 3 - skipped one # SKIP not now', 'ok 4 - parses decimals', 'ok 5 a # b \\# c'].join('\n');
    const m = parseTestOutcomes(out);
    expect(m.get('parses whole units')).toBe('passed');
    expect(m.get('parses decimals')).toBe('failed');
    expect(m.get('nested one')).toBe('passed');
    expect(m.has('skipped one')).toBe(false);
    expect(statusOf(['parses whole units', 'absent'], m)).toEqual({ 'parses whole units': 'passed', absent: 'missing' });
  });

  it('reads spec-style ticks and crosses (node, mocha, jest)', () => {
    const m = parseTestOutcomes('\u001b[32m✔ adds (0.5ms)\u001b[39m\n  ✖ subtracts (1.2ms)\n    ✓ jest style (3 ms)\n    ✕ jest failing\n');
    expect([...m]).toEqual([['adds', 'passed'], ['subtracts', 'failed'], ['jest style', 'passed'], ['jest failing', 'failed']]);
  });
});

function result(id: string, over: Partial<InstanceResult>): InstanceResult {
  return {
    instance_id: id,
    model_name_or_path: 'acia/m',
    model_patch: '',
    resolved: false,
    reason: 'succeeded',
    message: '',
    runId: 'r1',
    ledger: '/o/work/x/ledger.jsonl',
    wiki: '/o/work/x/page.md',
    runBranch: 'acia/r1',
    headCommit: null,
    costUsd: 0.1,
    tokens: 100,
    wallMs: 1000,
    failToPass: { a: 'passed' },
    passToPass: { b: 'passed', c: 'failed' },
    finishedAt: '2026-01-01T00:00:00.000Z',
    ...over,
  };
}

describe('report', () => {
  it('computes mean, median and nearest-rank p90', () => {
    expect(distribution([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])).toEqual({ mean: 5.5, median: 5, p90: 9, total: 55 });
    expect(distribution([])).toEqual({ mean: null, median: null, p90: null, total: 0 });
  });

  it('counts unfinished instances as unresolved and leaves unknown costs out', () => {
    const instances = [{ instance_id: 'a' }, { instance_id: 'b' }, { instance_id: 'c' }, { instance_id: 'd' }];
    const results = new Map([
      ['a', result('a', { resolved: true, costUsd: 0.2 })],
      ['b', result('b', { reason: 'verification_failed', costUsd: null })],
      ['c', result('c', { resolved: true, costUsd: 0.4, wallMs: 3000 })],
    ]);
    const r = buildReport(instances, results);
    expect(r.resolved).toBe(2);
    expect(r.resolvedPct).toBe(50);
    expect(r.finished).toBe(3);
    expect(r.costUsd).toMatchObject({ mean: 0.3, unknown: 1 });
    expect(r.exits).toMatchObject({ succeeded: 2, verification_failed: 1, error: 0 });
    expect(r.instances[0]).toMatchObject({ failToPass: '1/1', passToPass: '1/2' });
    expect(r.instances[3]).toMatchObject({ finished: false, resolved: false });
    const md = renderMarkdown(r, '/o');
    expect(md).toContain('**Resolved: 2/4 (50%)**');
    expect(md).toContain('| d | not run |');
    expect(md).toContain('[page](work/x/page.md)');
    expect(md).toContain('1 run(s) used an unpriced model');
  });

  it('reports SWE-bench harness lists and per-instance tests_status in the harness’s shape', () => {
    const patch = 'diff --git a/x b/x\n';
    const instances = ['res', 'unres', 'empty', 'err', 'notrun'].map((instance_id) => ({ instance_id }));
    const results = new Map([
      ['res', result('res', { model_patch: patch, resolved: true, passToPass: { b: 'passed' } })],
      ['unres', result('unres', { model_patch: patch, failToPass: { a: 'failed', a2: 'missing' } })],
      ['empty', result('empty', { model_patch: '', reason: 'error' })],
      ['err', result('err', { model_patch: patch, gradeError: 'the test patch does not apply to the graded tree: x' })],
    ]);
    const r = buildReport(instances, results);
    expect(r).toMatchObject({
      total_instances: 5,
      submitted_instances: 4,
      completed_instances: 2,
      resolved_instances: 1,
      unresolved_instances: 1,
      empty_patch_instances: 1,
      error_instances: 1,
      completed_ids: ['res', 'unres'],
      incomplete_ids: ['notrun'],
      empty_patch_ids: ['empty'],
      submitted_ids: ['empty', 'err', 'res', 'unres'],
      resolved_ids: ['res'],
      unresolved_ids: ['unres'],
      error_ids: ['err'],
      schema_version: 2,
    });
    const row = (id: string) => r.instances.find((i) => i.instance_id === id)!;
    expect(row('res')).toMatchObject({ patch_is_None: false, patch_exists: true, patch_successfully_applied: true, tests_status: { FAIL_TO_PASS: { success: ['a'], failure: [] }, PASS_TO_PASS: { success: ['b'], failure: [] } } });
    expect(row('unres').tests_status.FAIL_TO_PASS).toEqual({ success: [], failure: ['a', 'a2'] });
    expect(row('unres').tests_status.PASS_TO_FAIL).toEqual({ success: [], failure: [] });
    expect(row('empty')).toMatchObject({ patch_exists: false, patch_successfully_applied: false });
    expect(row('err')).toMatchObject({ patch_exists: true, patch_successfully_applied: false });
    expect(row('notrun')).toMatchObject({ patch_is_None: true, patch_exists: false });
  });

  it('compares two output directories', () => {
    const a = mkdtempSync(join(tmpdir(), 'acia-cmp-a-'));
    const b = mkdtempSync(join(tmpdir(), 'acia-cmp-b-'));
    const ids = [{ instance_id: 'x' }, { instance_id: 'y' }];
    writeOutputs(a, ids, new Map([['x', result('x', { resolved: true })]]));
    writeOutputs(b, ids, new Map([['x', result('x', {})], ['y', result('y', { resolved: true, reason: 'error' })]]));
    const table = compareEvals(a, b);
    expect(table).toMatch(/^resolved\s+1\/2 \(50%\)\s+1\/2 \(50%\)$/m);
    expect(table).toMatch(/^x\s+resolved succeeded \$0\.1000\s+unresolved succeeded \$0\.1000$/m);
    expect(table).toMatch(/^y\s+not run\s+resolved error/m);
  });

  it('picks a per-instance script from a directory and keeps paths out of the model name', () => {
    const isDir = (p: string) => p === '/s';
    expect(instanceModelSpec('scripted:/s', 'i1', isDir)).toBe('scripted:/s/i1.json');
    expect(instanceModelSpec('chaos:/s,seed=3,rate=0.2', 'i1', isDir)).toBe('chaos:/s/i1.json,seed=3,rate=0.2');
    expect(instanceModelSpec('scripted:/f.json', 'i1', isDir)).toBe('scripted:/f.json');
    expect(instanceModelSpec('anthropic:claude-sonnet-5-5', 'i1', isDir)).toBe('anthropic:claude-sonnet-5-5');
    expect(modelNameOf('scripted:/home/me/scripts')).toBe('acia/scripted:scripts');
    expect(modelNameOf('anthropic:claude-sonnet-5-5')).toBe('acia/anthropic:claude-sonnet-5-5');
    expect(modelNameOf('anthropic:claude-sonnet-5-5', 'claude,codex')).toBe('acia/anthropic:claude-sonnet-5-5+dev:claude,codex');
    expect(modelNameOf('anthropic:m', 'acp:/usr/local/bin/my-agent --acp')).toBe('acia/anthropic:m+dev:acp:my-agent');
  });
});
