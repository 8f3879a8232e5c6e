// Plans written with the ACM texts' own names are read onto ACIA's contracts, or rejected with a path.
import { describe, expect, it } from 'vitest';
import { validateDocument } from '../../../src/core/acm/validate-document.js';
import { planFromSpec } from '../../../src/core/acm/spec-names.js';

const REF = `sha256:${'a'.repeat(64)}`;
const specPlan = (over: Record<string, unknown> = {}) => ({
  id: 'plan-A',
  contextRef: REF,
  capabilityMapVersion: 'acia-caps@1',
  tasks: [
    { id: 'a', capabilityRef: 'dev.implement@acia-caps@1', input: { instructions: 'x' }, retryPolicy: { attempts: 2, backoff: 'fixed' } },
    { id: 'b', capability: 'dev.implement', input: { instructions: 'y' } },
    { id: 'j', capability: 'qa.verify' },
    { id: 'undo', capability: 'dev.fix', input: { instructions: 'undo a' } },
  ],
  edges: [
    { from: 'a', to: 'j' },
    { from: 'b', to: 'j' },
    { from: 'a', to: 'undo', on_error: 'COMPENSATION_REQUIRED' },
  ],
  join: 'any',
  rationale: 'spec style',
  ...over,
});

describe('ACM spec names', () => {
  it('maps on_error, plan-level join, capabilityRef and retryPolicy onto a valid ACIA plan', () => {
    const r = planFromSpec(specPlan());
    expect(r.value).toMatchObject({
      goalId: 'goal-plan-A',
      joins: [{ task: 'j', mode: 'any', waitFor: ['a', 'b'] }],
      edges: expect.arrayContaining([{ from: 'a', to: 'undo', onError: 'COMPENSATION_REQUIRED' }]) as unknown,
      tasks: expect.arrayContaining([expect.objectContaining({ id: 'a', capability: 'dev.implement', retry: { attempts: 2, backoff: 'fixed' } })]) as unknown,
    });
    const doc = validateDocument(JSON.stringify(specPlan()), 'plan.json');
    expect(doc).toMatchObject({ status: 'checked', kind: 'plan', ok: true });
    expect(doc.status === 'checked' && doc.summary).toContain('read with ACM spec names');
  });

  it('a plan set whose plans name their alternatives, with no selection, chooses the first', () => {
    const set = { goalId: 'G', contextRef: REF, plans: [specPlan({ alternatives: ['plan-B'] }), specPlan({ id: 'plan-B', alternatives: ['plan-A'] })] };
    const doc = validateDocument(JSON.stringify(set), 'set.json');
    expect(doc).toMatchObject({ status: 'checked', kind: 'plan-set', ok: true });
    expect(doc.status === 'checked' && doc.summary).toContain('chose plan-A');
  });

  it('rejects what cannot be mapped with the JSON path and the reason', () => {
    const badAlt = validateDocument(JSON.stringify({ goalId: 'G', contextRef: REF, plans: [specPlan({ alternatives: ['plan-Z'] })] }), 'set.json');
    expect(badAlt).toMatchObject({ ok: false, errors: [{ path: '$.plans[0].alternatives[0]', code: 'UNKNOWN_PLAN', message: "alternative 'plan-Z' is not another plan of this set" }] });
    const wrongVersion = validateDocument(JSON.stringify(specPlan({ tasks: [{ id: 'a', capabilityRef: 'dev.implement@other-map', input: { instructions: 'x' } }], edges: [], join: undefined })), 'p.json');
    expect(wrongVersion).toMatchObject({ ok: false, errors: [expect.objectContaining({ path: '$.tasks[0].capabilityVersion', code: 'CAPABILITY_VERSION', message: expect.stringContaining('dev.implement@other-map') as unknown })] });
    const badKind = validateDocument(JSON.stringify(specPlan({ edges: [{ from: 'a', to: 'j', on_error: 'OOPS' }] })), 'p.json');
    expect(badKind).toMatchObject({ ok: false, errors: [expect.objectContaining({ path: '$.edges[0].onError' })] });
  });

  it('reads a bare plan with alternatives[], the spec retryPolicy, sha256- refs, both edge spellings, and a capability at its own version', () => {
    // The reference SDK's plan shape (audit interop/ref-plan.json) with ACIA capabilities.
    const plan = specPlan({
      contextRef: `sha256-${'a'.repeat(64)}`,
      alternatives: ['plan-B'],
      tasks: [
        { id: 'a', capabilityRef: 'dev.implement@1.0.0', input: { instructions: 'x' }, retryPolicy: { maxAttempts: 3, backoffSeconds: [5, 15], retryOn: ['RETRYABLE_ERROR'] } },
        { id: 'j', capability: 'qa.verify' },
        { id: 'undo', capability: 'dev.fix', input: { instructions: 'undo a' } },
      ],
      edges: [{ from: 'a', to: 'j' }, { from: 'a', to: 'undo', on_error: 'COMPENSATION_REQUIRED', onError: 'COMPENSATION_REQUIRED' }],
    });
    const r = planFromSpec(plan);
    expect(r.value).toMatchObject({
      contextRef: REF,
      alternatives: ['plan-B'],
      tasks: expect.arrayContaining([expect.objectContaining({ id: 'a', capability: 'dev.implement', capabilityVersion: '1.0.0', retry: { attempts: 3, delaysMs: [5000, 15000], retryOn: ['RETRYABLE_ERROR'], backoff: 'fixed', jitter: false } })]) as unknown,
      edges: expect.arrayContaining([{ from: 'a', to: 'undo', onError: 'COMPENSATION_REQUIRED' }]) as unknown,
    });
    expect(validateDocument(JSON.stringify(plan), 'p.json')).toMatchObject({ status: 'checked', kind: 'plan', ok: true });
  });
});

describe('YAML documents', () => {
  it('reads a spec-style plan written in YAML, and names the line of a YAML syntax error', () => {
    const yaml = [
      'id: plan-A',
      `contextRef: "${REF}"`,
      'capabilityMapVersion: acia-caps@1',
      'tasks:',
      '  - id: a',
      '    capabilityRef: dev.implement@acia-caps@1',
      '    input: { instructions: "do a" }',
      '  - id: undo',
      '    capability: dev.fix',
      '    input: { instructions: "undo a" }',
      'edges:',
      '  - { from: a, to: undo, on_error: COMPENSATION_REQUIRED }',
    ].join('\n');
    expect(validateDocument(yaml, 'plan.yaml')).toMatchObject({ status: 'checked', kind: 'plan', ok: true });
    const broken = validateDocument('id: [unclosed\ntasks: 1\n', 'plan.yml');
    expect(broken).toMatchObject({ status: 'unreadable', message: expect.stringContaining('not valid YAML') as unknown });
    expect(broken.status === 'unreadable' && broken.line).toBeGreaterThanOrEqual(1);
  });
});
