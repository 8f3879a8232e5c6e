import { describe, expect, it } from 'vitest';
import type { Edge, Join, Plan, TaskSpec } from '../../src/core/acm/contracts.js';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { foldRun } from '../../src/team/run-state.js';
import { schedule } from '../../src/team/scheduler.js';

const task = (id: string, capability = 'dev.implement'): TaskSpec => ({ id, capability, input: {}, verification: [] });
const plan = (tasks: TaskSpec[], edges: Edge[], joins: Join[] = []): Plan => ({
  id: 'p',
  goalId: 'g',
  contextRef: `sha256:${'a'.repeat(64)}`,
  capabilityMapVersion: 'acia-caps@1',
  tasks,
  edges,
  joins,
  rationale: '',
});

let seq = 0;
const e = (type: LedgerEntry['type'], data: unknown): LedgerEntry =>
  ({ seq: seq++, ts: '2026-01-01T00:00:00.000Z', runId: 'r', actor: 'team', type, data, prevHash: '0'.repeat(64), hash: '0'.repeat(64) }) as unknown as LedgerEntry;

function stateFor(p: Plan, events: [LedgerEntry['type'], unknown][]) {
  seq = 0;
  const planSet = { goalId: 'g', contextRef: p.contextRef, plans: [p], selection: { method: 'llm', chosenPlanId: 'p', rationale: 'r' } };
  return foldRun([
    e('PLAN_PROPOSED', { attempt: 1, planSet, valid: true, problems: [] }),
    e('PLAN_SELECTED', { planId: 'p', method: 'llm', rationale: 'r', alternatives: [] }),
    ...events.map(([t, d]) => e(t, d)),
  ]);
}
const done = (taskId: string, output: Record<string, unknown> = {}): [LedgerEntry['type'], unknown] => ['TASK_COMPLETED', { taskId, attempt: 1, output, summary: '' }];
const failed = (taskId: string, errorKind = 'FATAL_ERROR'): [LedgerEntry['type'], unknown] => ['TASK_FAILED', { taskId, attempt: 1, errorKind, message: 'x' }];

describe('schedule', () => {
  it('starts with the roots and runs independent tasks together', () => {
    const p = plan([task('a'), task('b'), task('c')], [{ from: 'a', to: 'c' }]);
    expect(schedule(stateFor(p, []), p).ready).toEqual(['a', 'b']);
  });

  it('waits for every predecessor by default', () => {
    const p = plan([task('a'), task('b'), task('c')], [{ from: 'a', to: 'c' }, { from: 'b', to: 'c' }]);
    expect(schedule(stateFor(p, [done('a')]), p).ready).toEqual(['b']);
    expect(schedule(stateFor(p, [done('a'), done('b')]), p).ready).toEqual(['c']);
  });

  it('asks for a guard value to be recorded before following a guarded edge', () => {
    const p = plan([task('a'), task('hi'), task('lo')], [
      { from: 'a', to: 'hi', guard: "$a.risk == 'HIGH'" },
      { from: 'a', to: 'lo', guard: "$a.risk != 'HIGH'" },
    ]);
    const s = schedule(stateFor(p, [done('a', { risk: 'HIGH' })]), p);
    expect(s.ready).toEqual([]);
    expect(s.guardsToRecord.map((x) => x.to)).toEqual(['hi', 'lo']);
    const after = stateFor(p, [done('a', { risk: 'HIGH' }), ['BRANCH_TAKEN', { from: 'a', to: 'hi', guard: 'g', value: true }], ['BRANCH_TAKEN', { from: 'a', to: 'lo', guard: 'g', value: false }]]);
    const s2 = schedule(after, p);
    expect(s2.ready).toEqual(['hi']);
    expect(s2.skip).toEqual(['lo']);
  });

  it('runs an any-join as soon as one waited-for branch is taken', () => {
    const p = plan(
      [task('a'), task('b'), task('j', 'qa.verify')],
      [{ from: 'a', to: 'j' }, { from: 'b', to: 'j' }],
      [{ task: 'j', mode: 'any', waitFor: ['a', 'b'] }],
    );
    expect(schedule(stateFor(p, [done('a')]), p).ready).toEqual(['b', 'j']);
  });

  it('follows an error edge only for the matching error kind', () => {
    const p = plan([task('a'), task('retry'), task('comp')], [
      { from: 'a', to: 'retry', onError: 'RETRYABLE_ERROR' },
      { from: 'a', to: 'comp', onError: 'COMPENSATION_REQUIRED' },
    ]);
    const s = schedule(stateFor(p, [failed('a', 'RETRYABLE_ERROR')]), p);
    expect(s.ready).toEqual(['retry']);
    expect(s.skip).toEqual(['comp']);
    const ok = schedule(stateFor(p, [done('a')]), p);
    expect(ok.skip).toEqual(['retry', 'comp']);
  });

  it('treats edges out of a superseded QA task as leaving from its re-verification', () => {
    const p = plan([task('d'), task('q', 'qa.verify'), task('after')], [{ from: 'd', to: 'q' }, { from: 'q', to: 'after' }]);
    const st = stateFor(p, [
      done('d'),
      failed('q'),
      ['TASK_ADDED', { task: task('q-fix1', 'dev.fix'), edges: [], reason: 'fix', parent: 'q', iteration: 1 }],
      ['TASK_ADDED', { task: task('q-r1', 'qa.verify'), edges: [{ from: 'q-fix1', to: 'q-r1' }], reason: 'reverify', replaces: 'q', iteration: 1 }],
    ]);
    expect(schedule(st, st.plan!).ready).toEqual(['q-fix1']);
    expect(st.iterations).toBe(1);
    const later = stateFor(p, [
      done('d'),
      failed('q'),
      ['TASK_ADDED', { task: task('q-fix1', 'dev.fix'), edges: [], reason: 'fix', parent: 'q', iteration: 1 }],
      ['TASK_ADDED', { task: task('q-r1', 'qa.verify'), edges: [{ from: 'q-fix1', to: 'q-r1' }], reason: 'reverify', replaces: 'q', iteration: 1 }],
      done('q-fix1'),
      done('q-r1'),
    ]);
    expect(schedule(later, later.plan!).ready).toEqual(['after']);
  });
});

describe('foldRun', () => {
  it('sums cost and tokens of model calls and notes an unknown price', () => {
    const usage = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 100, cacheWriteTokens: 0 };
    seq = 0;
    const s = foldRun([
      e('LLM_CALL', { caller: 'pm', model: 'm', requestHash: '', responseRef: '', usage, costUsd: 0.5, stopReason: 'end_turn', durationMs: 1 }),
      e('LLM_CALL', { caller: 'pm', model: 'm', requestHash: '', responseRef: '', usage, costUsd: null, stopReason: 'end_turn', durationMs: 1 }),
    ]);
    expect(s.tokens).toBe(230);
    expect(s.costUsd).toBe(0.5);
    expect(s.costKnown).toBe(false);
  });

  it('applies a human skip to the escalated task and abort to the run', () => {
    const p = plan([task('a')], []);
    const st = stateFor(p, [
      failed('a'),
      ['ESCALATION_REQUESTED', { reason: 'task_failed', taskId: 'a', message: 'm', options: [] }],
    ]);
    expect(st.escalations[0]!.answer).toBeNull();
    const skipped = stateFor(p, [
      failed('a'),
      ['ESCALATION_REQUESTED', { reason: 'task_failed', taskId: 'a', message: 'm', options: [] }],
      ['HUMAN_RESPONSE', { escalationSeq: 3, action: 'skip' }],
    ]);
    expect(skipped.tasks.get('a')!.status).toBe('skipped');
    const retried = stateFor(p, [
      failed('a'),
      ['ESCALATION_REQUESTED', { reason: 'task_failed', taskId: 'a', message: 'm', options: [] }],
      ['HUMAN_RESPONSE', { escalationSeq: 3, action: 'guidance', text: 'use a regex' }],
    ]);
    expect(retried.tasks.get('a')).toMatchObject({ status: 'pending', guidance: 'use a regex' });
  });
});
