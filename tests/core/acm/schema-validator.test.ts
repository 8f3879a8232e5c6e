import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateSchemas } from '../../../src/core/acm/generate-schemas.js';
import { SCHEMA_IDS, schemaValidator } from '../../../src/core/acm/schema-validator.js';
import { validateDocument } from '../../../src/core/acm/validate-document.js';
import { isAciaError } from '../../../src/core/errors.js';

const schemasDir = new URL('../../../schemas/', import.meta.url);

describe('schemaValidator', () => {
  it('validates with problems at JSON paths', () => {
    const r = schemaValidator.validate({ id: 't1', capability: '', retry: { attempts: 0 } }, 'task');
    expect(r.ok).toBe(false);
    expect(r.problems.map((p) => p.path)).toEqual(['$.capability', '$.retry.attempts']);
  });

  it('quotes keys that are not identifiers in paths', () => {
    const r = schemaValidator.validate({ model: 'x', prices: { 'a b': { inputPerMTok: -1 } } }, 'config');
    expect(r.problems.map((p) => p.path)).toContain('$.prices["a b"].inputPerMTok');
  });

  it('coerces by applying defaults', () => {
    const task = schemaValidator.coerce({ id: 't1', capability: 'qa.verify', retry: {} }, 'task');
    expect(task.input).toEqual({});
    expect(task.retry).toEqual({ attempts: 1, backoff: 'exp', baseMs: 1000, jitter: true });
    expect(schemaValidator.coerce({}, 'config').parallel).toBe(2);
  });

  it('throws INPUT_INVALID listing every problem when coercion fails', () => {
    try {
      schemaValidator.coerce({ id: 'g', intent: '', extra: true }, 'goal');
      expect.unreachable();
    } catch (e) {
      expect(isAciaError(e) && e.code).toBe('INPUT_INVALID');
      expect((e as Error).message).toContain('$.intent');
      expect((e as Error).message).toContain('$.extra: unknown field "extra"');
    }
  });
});

describe('generated JSON Schemas', () => {
  it('match the files in schemas/ (run `npm run schemas` when this fails)', () => {
    const generated = generateSchemas();
    const onDisk = readdirSync(schemasDir).filter((f) => f.endsWith('.schema.json')).sort();
    expect(onDisk).toEqual(Object.keys(generated).sort());
    for (const [file, content] of Object.entries(generated)) {
      expect(readFileSync(new URL(file, schemasDir), 'utf8'), file).toBe(content);
    }
  });

  it('cover every registered schema id with an $id and title', () => {
    const generated = generateSchemas();
    for (const id of SCHEMA_IDS) {
      const doc = JSON.parse(generated[`${id}.schema.json`] ?? '{}');
      expect(doc.$id).toBe(`urn:acia:schema:${id}`);
      expect(doc.title).toMatch(/^ACIA /);
    }
    expect(SCHEMA_IDS).toEqual(expect.arrayContaining(['plan', 'plan-set', 'task', 'context-packet', 'ledger-entry', 'stream-chunk', 'tool-descriptor', 'config']));
  });

  it('make defaulted fields optional and keep date-time formats', () => {
    const plan = JSON.parse(generateSchemas()['plan.schema.json'] ?? '{}');
    expect(plan.required).not.toContain('edges');
    const ledger = JSON.parse(generateSchemas()['ledger-entry.schema.json'] ?? '{}');
    expect(ledger.properties.ts.format).toBe('date-time');
    expect(ledger.properties.seq.type).toBe('integer');
  });
});

describe('schemas/examples', () => {
  const examples = readdirSync(new URL('examples/', schemasDir));

  it('include the documented examples', () => {
    expect(examples).toEqual(expect.arrayContaining(['plan-guarded-join.json', 'plan-set.json', 'context-packet.json', 'ledger.jsonl']));
  });

  it.each(examples)('%s is valid with no warnings', (file) => {
    const r = validateDocument(readFileSync(new URL(`examples/${file}`, schemasDir), 'utf8'), file);
    expect(r.status).toBe('checked');
    if (r.status !== 'checked') return;
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
    expect(r.ok).toBe(true);
  });

  it("plans point at the example context packet's content address", () => {
    const ctx = validateDocument(readFileSync(new URL('examples/context-packet.json', schemasDir), 'utf8'), 'c.json');
    const plan = JSON.parse(readFileSync(new URL('examples/plan-guarded-join.json', schemasDir), 'utf8'));
    expect(ctx.status === 'checked' && ctx.summary).toBe(`context packet, ${plan.contextRef}`);
  });
});
