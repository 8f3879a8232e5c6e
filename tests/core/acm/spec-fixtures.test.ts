// The ACM v0.5 spec's own example artifacts (spec §5.1-§5.5, §5.8; ddse-foundation/acm @ 70f33f7) as
// fixtures: each validates as ACIA reads it, in the corrected form where the spec's example is itself
// invalid (docs/acm-conformance.md lists the corrections); the verbatim examples fail for exactly those reasons.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CapabilityMap } from '../../../src/core/acm/contracts.js';
import { parseDocumentText } from '../../../src/core/acm/json-text.js';
import { capabilityMapFromSpec, goalFromSpec, packetFromSpec, taskFromSpec } from '../../../src/core/acm/spec-documents.js';
import { validateDocument, type ValidateDocumentOptions } from '../../../src/core/acm/validate-document.js';

const DIR = join(import.meta.dirname, '..', '..', 'fixtures', 'acm-v0.5');
const text = (name: string) => readFileSync(join(DIR, name), 'utf8');
/** A fixture parsed (JSON or YAML), before any mapping. */
const doc = (name: string): unknown => {
  const parsed = parseDocumentText(text(name), name);
  if (!parsed.ok) throw new Error(`${name}: ${parsed.message}`);
  return parsed.value;
};
const caps = CapabilityMap.parse(capabilityMapFromSpec(JSON.parse(text('capability-map.json'))).value);
const readSheet = (base: string) => (file: string) => {
  const path = resolve(dirname(join(DIR, base)), file);
  const parsed = parseDocumentText(readFileSync(path, 'utf8'), path);
  return parsed.ok ? parsed.value : null;
};
const check = (name: string, options: ValidateDocumentOptions = {}) => validateDocument(text(name), name, { caps, readSheet: readSheet(name), ...options });

describe("the spec's v0.5 example artifacts", () => {
  it.each([
    ['goal-card.yaml', 'goal'],
    ['context-packet.yaml', 'context-packet'],
    ['plan-set.yaml', 'plan-set'],
    ['task-spec.yaml', 'task'],
    ['capability-map.json', 'capability-map'],
  ])('%s is recognised by its kind and validates', (name, kind) => {
    const r = check(name);
    expect(r).toMatchObject({ status: 'checked', kind });
    expect(r.status === 'checked' ? r.errors : r).toEqual([]);
    expect(r.status === 'checked' && r.ok).toBe(true);
  });

  it('reads what each says: goal fields, packet version and augmentations, plan alternatives, the spec retryPolicy, verification from the sheet', () => {
    const plan = check('plan-set.yaml');
    expect(plan.status === 'checked' && plan.summary).toContain('plan set, 2 plans, chose plan-A');
    // The inputRef tasks: acia cannot run them (it does not read inputRef), and says so.
    expect(plan.status === 'checked' && plan.warnings.map((w) => w.code)).toContain('INPUT_REF');
    const task = taskFromSpec(doc('task-spec.yaml')).value;
    expect(task).toMatchObject({ id: 't3', capability: 'create_refund_txn', capabilityVersion: 'v2.2.1', retry: { attempts: 3, delaysMs: [5000, 15000], retryOn: ['RETRYABLE_ERROR'] } });
    expect(task).toMatchObject({ compensation: { capability: 'void_refund_txn', capabilityVersion: 'v1.0.0', triggerOn: ['COMPENSATION_REQUIRED'] }, tools: [{ name: 'billing.refund', timeoutSec: 30 }] });
    const goal = goalFromSpec(doc('goal-card.yaml')).value;
    expect(goal).toMatchObject({ id: 'REFUND-001', intent: expect.stringContaining('Issue a refund') as unknown, actors: ['support_agent', 'customer'], contextRequired: true, policyContext: { policy_sheet: 'policy/policy_sheet.yaml' }, metadata: { owner: 'support.ops' } });
    const packet = packetFromSpec(doc('context-packet.yaml')).value;
    expect(packet).toMatchObject({ id: expect.stringMatching(/^sha256-/) as unknown, version: 'ctx-2025-10-03-001', constraints: { latency_sla_sec: 120 }, augmentations: [{ type: 'summary' }, { type: 'embedding' }], provenance: { builder: 'ctx-ingestor@1.3.2', retrievalSnapshot: 'kb-snap:2025-09-30T23:59Z' } });
    // Without the sheet, the verificationRefs are errors: a declared check is never dropped.
    const noSheet = validateDocument(text('task-spec.yaml'), 'task-spec.yaml', { caps });
    expect(noSheet).toMatchObject({ ok: false, errors: [expect.objectContaining({ code: 'VERIFICATION_REF', path: '$.verificationRefs[0]' })] });
    // Against ACIA's own map, the refund capabilities are unknown.
    expect(validateDocument(text('task-spec.yaml'), 'task-spec.yaml', { readSheet: readSheet('task-spec.yaml') })).toMatchObject({ ok: false, errors: [expect.objectContaining({ code: 'UNKNOWN_CAPABILITY' })] });
  });

  it('the verbatim examples fail for the reasons the corrections name, and only those', () => {
    // Goal Card: `metadata` twice.
    expect(validateDocument(text('spec-original/goal-card.yaml'), 'goal-card.yaml')).toMatchObject({ status: 'unreadable', message: expect.stringMatching(/keys must be unique/i) as unknown });
    // Context Packet: elided digests.
    const packet = validateDocument(text('spec-original/context-packet.yaml'), 'context-packet.yaml');
    expect(packet.status === 'checked' && packet.errors.map((e) => e.path)).toEqual(['$.sources[0].digest', '$.sources[1].digest']);
    // PlanSet: the note inside the YAML block.
    expect(validateDocument(text('spec-original/plan-set.yaml'), 'plan-set.yaml')).toMatchObject({ status: 'unreadable' });
    // ... and with the note taken out, the three tasks it names are missing.
    const withoutNote = text('spec-original/plan-set.yaml').replace(/\n> \*\*Note:\*\*.*\n?/, '\n');
    const set = validateDocument(withoutNote, 'plan-set.yaml', { caps });
    expect(set.status === 'checked' && [...new Set(set.errors.map((e) => e.code))]).toEqual(['EDGE_UNKNOWN_TASK']);
    // Verification Sheet: a DSL of functions and live state, which acia refuses to evaluate.
    const original = doc('spec-original/refund.verify.yaml');
    const task = validateDocument(text('task-spec.yaml'), 'task-spec.yaml', { caps, readSheet: () => original });
    expect(task.status === 'checked' && task.errors.map((e) => e.code)).toEqual(['GUARD_SYNTAX', 'GUARD_SYNTAX', 'GUARD_SYNTAX']);
  });

  it("a Task Spec asking for a Nucleus is refused: acia runs none", () => {
    const doc = text('task-spec.yaml').replace('capabilityRef:', 'nucleusRef: "nucleus-planA"\ncapabilityRef:');
    expect(validateDocument(doc, 'task-spec.yaml', { caps, readSheet: readSheet('task-spec.yaml') })).toMatchObject({ ok: false, errors: [expect.objectContaining({ code: 'NUCLEUS_UNSUPPORTED', path: '$.nucleusRef' })] });
  });
});
