import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { defaultCapabilityMap } from '../../../src/core/acm/capabilities.js';
import { validatePlan, validatePlanSet } from '../../../src/core/acm/validate-plan.js';

type PlanDoc = { id: string; goalId: string; contextRef: string; edges: { from: string; to: string }[] };
type SetDoc = { plans: PlanDoc[]; selection: { chosenPlanId: string } };
const example = <T = unknown>(name: string): T =>
  JSON.parse(readFileSync(new URL(`../../../schemas/examples/${name}`, import.meta.url), 'utf8')) as T;

const ref = `sha256:${'a'.repeat(64)}`;
const task = (id: string, capability = 'qa.verify', input: Record<string, unknown> = {}) => ({ id, capability, input });
const plan = (over: Record<string, unknown> = {}) => ({
  id: 'p',
  goalId: 'g',
  contextRef: ref,
  capabilityMapVersion: 'acia-caps@1',
  tasks: [task('t1'), task('t2'), task('t3')],
  edges: [
    { from: 't1', to: 't2' },
    { from: 't2', to: 't3' },
  ],
  ...over,
});

const check = (p: unknown) => validatePlan(p, defaultCapabilityMap);
const codes = (p: unknown) => check(p).errors.map((e) => `${e.code} ${e.path}`);

describe('validatePlan', () => {
  it('accepts the guarded-join example with no errors or warnings', () => {
    const r = check(example('plan-guarded-join.json'));
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.plan?.tasks).toHaveLength(6);
  });

  it('maps schema issues to JSON paths, one per unknown field', () => {
    const r = check(plan({ tasks: [{ id: '1bad', capability: 'qa.verify', extra: 1 }] }));
    expect(r.ok).toBe(false);
    expect(r.errors.map((e) => e.path)).toEqual(expect.arrayContaining(['$.tasks[0].id', '$.tasks[0].extra']));
    expect(r.errors.every((e) => e.code === 'SCHEMA')).toBe(true);
  });

  it('rejects an unknown capability at its path', () => {
    expect(codes(plan({ tasks: [task('t1'), task('t2', 'dev.deploy'), task('t3')] }))).toEqual(['UNKNOWN_CAPABILITY $.tasks[1].capability']);
  });

  it('rejects a plan written for another capability map version', () => {
    expect(codes(plan({ capabilityMapVersion: 'acia-caps@0' }))).toEqual(['CAPABILITY_MAP_VERSION $.capabilityMapVersion']);
  });

  it("checks each task's input against its capability's input schema", () => {
    const r = check(plan({ tasks: [task('t1', 'dev.implement', { files: ['a.ts'] }), task('t2', 'human.approve', { question: 'ok?', x: 1 }), task('t3')] }));
    expect(r.errors.map((e) => `${e.code} ${e.path}`)).toEqual(['TASK_INPUT $.tasks[0].input.instructions', 'TASK_INPUT $.tasks[1].input.x']);
  });

  it('rejects duplicate task ids', () => {
    expect(codes(plan({ tasks: [task('t1'), task('t2'), task('t3'), task('t2')] }))).toContain('DUPLICATE_TASK_ID $.tasks[3].id');
  });

  it('rejects edges from and to missing tasks', () => {
    const edges = [
      { from: 't1', to: 't2' },
      { from: 't2', to: 't9' },
      { from: 'tx', to: 't3' },
    ];
    expect(codes(plan({ edges }))).toEqual(['EDGE_UNKNOWN_TASK $.edges[1].to', 'EDGE_UNKNOWN_TASK $.edges[2].from']);
  });

  it('names the cycle, starting from its smallest task id', () => {
    const r = check(plan({ edges: [{ from: 't1', to: 't2' }, { from: 't2', to: 't3' }, { from: 't3', to: 't1' }] }));
    expect(r.errors).toEqual([{ path: '$.edges[2]', code: 'CYCLE', message: 'cycle: t1 -> t2 -> t3 -> t1' }]);
    expect(codes(plan({ edges: [{ from: 't2', to: 't2' }] }))).toEqual(['CYCLE $.edges[0]']);
  });

  it('finds a cycle in a long chain without overflowing the stack', () => {
    const n = 20_000;
    const tasks = Array.from({ length: n }, (_, i) => task(`t${i}`));
    const edges = Array.from({ length: n }, (_, i) => ({ from: `t${i}`, to: `t${(i + 1) % n}` }));
    expect(check(plan({ tasks, edges })).errors.map((e) => e.code)).toEqual(['CYCLE']);
  });

  it('checks join references: the task, the awaited tasks, and that each awaited task has an edge into the join', () => {
    const edges = [{ from: 't1', to: 't3' }, { from: 't1', to: 't2' }];
    const joins = [
      { task: 't3', mode: 'all', waitFor: ['t1', 't2', 't7'] },
      { task: 't8', mode: 'any', waitFor: ['t1'] },
    ];
    expect(codes(plan({ edges, joins }))).toEqual([
      'JOIN_NOT_PREDECESSOR $.joins[0].waitFor[1]',
      'JOIN_UNKNOWN_TASK $.joins[0].waitFor[2]',
      'JOIN_UNKNOWN_TASK $.joins[1].task',
    ]);
  });

  it('reports guard syntax errors with the column', () => {
    const r = check(plan({ edges: [{ from: 't1', to: 't2', guard: "$t1.risk = 'HIGH'" }, { from: 't2', to: 't3' }] }));
    expect(r.errors).toEqual([{ path: '$.edges[0].guard', code: 'GUARD_SYNTAX', message: "column 10: unexpected '='; did you mean '=='?" }]);
  });

  it('lets a guard read only the edge source or tasks before it', () => {
    const edges = [
      { from: 't1', to: 't2', guard: '$t1.ok' },
      { from: 't2', to: 't3', guard: '$t1.ok && $t2.ok' },
      { from: 't1', to: 't4', guard: '$t2.ok' },
      { from: 't1', to: 't5', guard: '$t9.ok' },
    ];
    const r = check(plan({ tasks: [task('t1'), task('t2'), task('t3'), task('t4'), task('t5')], edges }));
    expect(r.errors.map((e) => `${e.code} ${e.path}`)).toEqual(['GUARD_NOT_PREDECESSOR $.edges[2].guard', 'GUARD_UNKNOWN_TASK $.edges[3].guard']);
    expect(r.errors[0]?.message).toContain('$t2');
  });

  it('warns about tasks that cannot be reached from a root, and counts error edges as reachable', () => {
    const tasks = [task('t1'), task('t2'), task('t3'), task('t4'), task('t5')];
    const edges = [
      { from: 't1', to: 't2', onError: 'FATAL_ERROR' },
      { from: 't3', to: 't4' },
      { from: 't4', to: 't3' },
      { from: 't4', to: 't5' },
    ];
    const r = check(plan({ tasks, edges }));
    expect(r.warnings.map((w) => `${w.code} ${w.path}`)).toEqual(['UNREACHABLE_TASK $.tasks[4]']);
    expect(r.errors.map((e) => e.code)).toEqual(['CYCLE']);
  });

  it('warns about a task with no edges in a plan that has edges', () => {
    const r = check(plan({ tasks: [task('t1'), task('t2'), task('t3'), task('lonely')] }));
    expect(r.ok).toBe(true);
    expect(r.warnings.map((w) => `${w.code} ${w.path}`)).toEqual(['ISOLATED_TASK $.tasks[3]']);
  });
});

describe('validatePlanSet', () => {
  it('accepts the Plan-A/Plan-B example', () => {
    const r = validatePlanSet(example('plan-set.json'), defaultCapabilityMap);
    expect(r.errors).toEqual([]);
    expect(r.planSet?.selection.chosenPlanId).toBe('plan-A');
  });

  it('requires one contextRef and goal, unique plan ids and a chosen plan that exists', () => {
    const set = example<SetDoc>('plan-set.json');
    set.plans[1]!.id = 'plan-A';
    set.plans[1]!.contextRef = `sha256:${'b'.repeat(64)}`;
    set.plans[1]!.goalId = 'other';
    set.selection.chosenPlanId = 'plan-C';
    const r = validatePlanSet(set, defaultCapabilityMap);
    expect(r.errors.map((e) => `${e.code} ${e.path}`)).toEqual([
      'DUPLICATE_PLAN_ID $.plans[1].id',
      'CONTEXT_MISMATCH $.plans[1].contextRef',
      'GOAL_MISMATCH $.plans[1].goalId',
      'UNKNOWN_PLAN $.selection.chosenPlanId',
    ]);
  });

  it('reports problems inside a plan under that plan’s path', () => {
    const set = example<SetDoc>('plan-set.json');
    set.plans[1]!.edges.push({ from: 't3', to: 't1' });
    const r = validatePlanSet(set, defaultCapabilityMap);
    expect(r.errors).toEqual([{ path: '$.plans[1].edges[2]', code: 'CYCLE', message: 'cycle: t1 -> t2 -> t3 -> t1' }]);
  });
});
