// The plan approval gate's decisions on their own: an answer as typed (`--answer`, MCP, the fleet) read
// into approve, switch, edit, reject or abort, and checked against the plans before anything is recorded
// (the other plan must exist; an edit must be a valid plan, with the validator's message otherwise).
import { describe, expect, it } from 'vitest';
import type { PlanSet } from '../../src/core/acm/contracts.js';
import { defaultCapabilityMap } from '../../src/core/acm/capabilities.js';
import { validatePlanSet } from '../../src/core/acm/validate-plan.js';
import { emptyRunState } from '../../src/core/run/state.js';
import { noMcp } from '../../src/team/deps-defaults.js';
import { decide, parseApprovalAnswer } from '../../src/team/plan-approval.js';
import type { RunContext } from '../../src/team/run-context.js';
import { expectAciaError } from '../helpers/failure.js';
import { savedPlanSet } from './team-rig.js';

/** Plan-A (t1 then QA t2) and Plan-B (b1), as the PM proposed them, Plan-A chosen. */
function plans(): PlanSet {
  const a = savedPlanSet([{ id: 't1', capability: 'dev.implement' }, { id: 't2', capability: 'qa.verify' }], [{ from: 't1', to: 't2' }]);
  const b = savedPlanSet([{ id: 'b1', capability: 'dev.implement' }], []).plans[0]!;
  return { ...a, plans: [a.plans[0]!, { ...b, id: 'plan-B' }] };
}

/** What `decide` reads of a run at the gate: its state (nothing started), the plan checks, its MCP tools and roles. */
const ctx = {
  state: emptyRunState(),
  facts: {},
  deps: {
    governance: { validatePlanSet: (set: unknown, facts?: Record<string, unknown>) => validatePlanSet(set, defaultCapabilityMap, { facts: facts ?? {} }).errors.map((p) => ({ path: p.path, message: p.message })) },
    tools: { mcp: noMcp },
  },
  roles: { byName: new Map() },
} as unknown as RunContext;

describe('the plan approval gate', () => {
  it('reads an answer as typed: approve, abort, switch [id], edit <JSON>, anything else a rejection with feedback', () => {
    expect(parseApprovalAnswer(' Approve ')).toEqual({ action: 'approve' });
    expect(parseApprovalAnswer('ABORT')).toEqual({ action: 'abort' });
    expect(parseApprovalAnswer('switch')).toEqual({ action: 'switch' });
    expect(parseApprovalAnswer('Switch plan-B')).toEqual({ action: 'switch', text: 'plan-B' });
    expect(parseApprovalAnswer('edit {"id":"plan-A"}')).toEqual({ action: 'edit', text: '{"id":"plan-A"}' });
    expect(parseApprovalAnswer('edit')).toEqual({ action: 'edit' });
    expect(parseApprovalAnswer('approve it but keep the old API')).toEqual({ action: 'guidance', text: 'approve it but keep the old API' });
    expect(parseApprovalAnswer('switcheroo')).toEqual({ action: 'guidance', text: 'switcheroo' });
  });

  it('approves the PM’s choice, aborts, and switches to the other plan or the one named; a plan that does not exist is refused', () => {
    const set = plans();
    expect(decide(ctx, set, { action: 'approve' })).toEqual({ kind: 'approve' });
    expect(decide(ctx, set, { action: 'abort' })).toEqual({ kind: 'abort' });
    expect(decide(ctx, set, { action: 'switch' })).toEqual({ kind: 'switch', planId: 'plan-B' });
    expect(decide(ctx, set, { action: 'switch', text: 'plan-A' })).toEqual({ kind: 'switch', planId: 'plan-A' });
    expectAciaError(() => decide(ctx, set, { action: 'switch', text: 'Plan-Z' }), 'USAGE', /^there is no plan Plan-Z \(plans: plan-A, plan-B\)$/);
    expectAciaError(() => decide(ctx, { ...set, plans: [set.plans[0]!] }, { action: 'switch' }), 'USAGE', /^there is no other plan than plan-A to switch to$/);
  });

  it('takes a valid edit, completed from the plan it edits (goal, context, capability map)', () => {
    const set = plans();
    const edited = structuredClone(set.plans[0]!);
    edited.tasks[0]!.title = 'EDITED';
    const { goalId: _g, contextRef: _c, capabilityMapVersion: _v, ...bare } = edited;
    const d = decide(ctx, set, { action: 'edit', text: JSON.stringify(bare) });
    expect(d.kind).toBe('edit');
    expect(d.kind === 'edit' ? d.plan : null).toEqual(edited);
    // No id: the PM's choice is what is edited.
    const { id: _i, ...noId } = bare;
    expect(decide(ctx, set, { action: 'edit', text: JSON.stringify(noId) })).toMatchObject({ kind: 'edit', plan: { id: 'plan-A' } });
  });

  it('refuses an edit that is no plan, with the validator’s message: not JSON, not an object, no tasks, an edge to a task it lacks, an unknown capability', () => {
    const set = plans();
    const edit = (value: unknown) => () => decide(ctx, set, { action: 'edit', text: typeof value === 'string' ? value : JSON.stringify(value) });
    expectAciaError(edit('{not json'), 'INPUT_INVALID', /^the edited plan is not valid JSON: /);
    expectAciaError(edit([set.plans[0]]), 'INPUT_INVALID', /^the edited plan must be a JSON object \(one plan\)$/);
    expectAciaError(edit({ id: 'plan-A', rationale: 'x', tasks: [] }), 'INPUT_INVALID', /^the edited plan is invalid: \$\.tasks/);
    const dangling = structuredClone(set.plans[0]!);
    dangling.edges.push({ from: 't1', to: 't9' });
    expectAciaError(edit(dangling), 'INPUT_INVALID', /^the edited plan is invalid: .*t9/);
    const unknown = structuredClone(set.plans[0]!);
    unknown.tasks[0]!.capability = 'dev.teleport';
    expectAciaError(edit(unknown), 'INPUT_INVALID', /^the edited plan is invalid: .*dev\.teleport/);
  });

  it('reads other text as a rejection with feedback for the PM; a rejection without feedback is refused', () => {
    expect(decide(ctx, plans(), { action: 'guidance', text: '  split the helper from its test ' })).toEqual({ kind: 'reject', feedback: 'split the helper from its test' });
    expectAciaError(() => decide(ctx, plans(), { action: 'guidance', text: '   ' }), 'USAGE', /^a rejection needs feedback for the PM: say what to change$/);
  });
});
