// What a plan's expressions read is checked before it runs (audit A2 and V): guards and verification
// expressions parse, read only tasks recorded by then and facts the Context Packet has; idemKey templates
// name what they can; and a join 'all' a guard can split is flagged.
import { describe, expect, it } from 'vitest';
import { defaultCapabilityMap } from '../../../src/core/acm/capabilities.js';
import { validatePlan } from '../../../src/core/acm/validate-plan.js';
import { planFromSpec } from '../../../src/core/acm/spec-names.js';

const ref = `sha256:${'a'.repeat(64)}`;
const plan = (tasks: Record<string, unknown>[], edges: Record<string, unknown>[] = [], joins: Record<string, unknown>[] = []) => ({
  id: 'p',
  goalId: 'g',
  contextRef: ref,
  capabilityMapVersion: 'acia-caps@1',
  tasks: tasks.map((t) => ({ capability: 'qa.verify', input: {}, ...t })),
  edges,
  joins,
});
const facts = { testCommand: 'npm test', fileCount: 3 };
const problems = (p: unknown, f: Record<string, unknown> | null = null) => {
  const r = validatePlan(p, defaultCapabilityMap, { facts: f });
  return { errors: r.errors.map((e) => `${e.code} ${e.path}`), warnings: r.warnings.map((e) => `${e.code} ${e.path}`) };
};

describe('facts a plan reads', () => {
  const guarded = plan([{ id: 't1' }, { id: 't2' }], [{ from: 't1', to: 't2', guard: "context.facts.noSuchFact == 'EU' || !facts.fileCount" }]);
  it('a guard over a fact the packet does not have is an error when the packet is known', () => {
    expect(problems(guarded, facts).errors).toEqual(['GUARD_UNKNOWN_FACT $.edges[0].guard']);
    expect(validatePlan(guarded, defaultCapabilityMap, { facts }).errors[0]?.message).toContain("the fact 'noSuchFact'");
  });
  it('a fact the packet has passes, and without a packet facts are left to the run', () => {
    expect(problems(plan([{ id: 't1' }, { id: 't2' }], [{ from: 't1', to: 't2', guard: 'facts.fileCount > 2' }]), facts).errors).toEqual([]);
    expect(problems(guarded, null).errors).toEqual([]);
  });
  it('an idemKey template names goal.id, plan.id, task.id or a fact the packet has', () => {
    const p = plan([{ id: 't1', idemKey: '${goal.id}-${context.facts.orderId}' }, { id: 't2', idemKey: '${foo}' }, { id: 't3', idemKey: 'k-${task.id' }]);
    expect(problems(p, facts).errors).toEqual(['IDEMKEY $.tasks[0].idemKey', 'IDEMKEY $.tasks[1].idemKey', 'IDEMKEY $.tasks[2].idemKey']);
    expect(problems(plan([{ id: 't1', idemKey: '${goal.id}-${facts.testCommand}-${task.id}' }]), facts).errors).toEqual([]);
  });
});

describe('verification expressions are parsed by validation', () => {
  it('rejects what the guard language cannot read, at the expression path', () => {
    const p = plan([{ id: 't1', verification: ['output.passed == true', 'exists(output.x)', '((( bad', '$t1.passedCount >= 1'] }]);
    expect(problems(p).errors).toEqual(['GUARD_SYNTAX $.tasks[0].verification[0]', 'GUARD_SYNTAX $.tasks[0].verification[1]', 'GUARD_SYNTAX $.tasks[0].verification[2]']);
  });
  it('an expression reads its own task and those before it, never a later or unknown one', () => {
    const p = plan([{ id: 't1', verification: ['$t2.passed == true', '$nosuch.x == 1'] }, { id: 't2', verification: ['$t1.passed == true && $t2.passed == true'] }], [{ from: 't1', to: 't2' }]);
    expect(problems(p).errors).toEqual(['VERIFICATION_NOT_PREDECESSOR $.tasks[0].verification[0]', 'VERIFICATION_UNKNOWN_TASK $.tasks[0].verification[1]']);
  });
  it('a verification over a missing fact is an error too', () => {
    expect(problems(plan([{ id: 't1', verification: ['facts.region == "EU"'] }]), facts).errors).toEqual(['VERIFICATION_UNKNOWN_FACT $.tasks[0].verification[0]']);
  });
});

describe("a join 'all' a guard can split", () => {
  // Adversarial plan A4: a diamond whose two branches are exclusive guards.
  const edges = [
    { from: 't0', to: 'a', guard: '$t0.passed == true' },
    { from: 't0', to: 'b', guard: '$t0.passed != true' },
    { from: 'a', to: 'j' },
    { from: 'b', to: 'j' },
  ];
  const tasks = [{ id: 't0' }, { id: 'a' }, { id: 'b' }, { id: 'j' }];
  it('is warned about for a declared all join, an implicit fan-in, and a spec plan-level join: all', () => {
    expect(problems(plan(tasks, edges, [{ task: 'j', mode: 'all', waitFor: ['a', 'b'] }])).warnings).toEqual(['JOIN_ALL_GUARDED $.tasks[3]']);
    expect(problems(plan(tasks, edges)).warnings).toEqual(['JOIN_ALL_GUARDED $.tasks[3]']);
    const spec = planFromSpec({ ...plan(tasks, edges), joins: undefined, join: 'all' }).value;
    expect(problems(spec).warnings).toEqual(['JOIN_ALL_GUARDED $.tasks[3]']);
  });
  it("is not warned about for a join 'any', or when one guard closes every branch at once", () => {
    expect(problems(plan(tasks, edges, [{ task: 'j', mode: 'any', waitFor: ['a', 'b'] }])).warnings).toEqual([]);
    const shared = [{ from: 'r', to: 't0', guard: '$r.passed == true' }, { from: 't0', to: 'a' }, { from: 't0', to: 'b' }, { from: 'a', to: 'j' }, { from: 'b', to: 'j' }];
    expect(problems(plan([{ id: 'r' }, ...tasks], shared)).warnings).toEqual([]);
  });
});
