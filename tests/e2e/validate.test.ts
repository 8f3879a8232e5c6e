// Drives the built CLI (`npm run build` first; `npm test` does): the Must-show list of issue 3.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cli = join(root, 'dist/bin/acia.js');
const examplePlan = join(root, 'schemas/examples/plan-guarded-join.json');
let dir = '';

function acia(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

type PlanDoc = { edges: { from: string; to: string }[] };

function planWith(edit: (plan: PlanDoc) => void): string {
  const plan = JSON.parse(readFileSync(examplePlan, 'utf8')) as PlanDoc;
  edit(plan);
  const file = join(dir, `plan-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(plan, null, 2));
  return file;
}

beforeAll(() => {
  if (!existsSync(cli)) throw new Error('dist/bin/acia.js is missing: run `npm run build` before the e2e tests');
  dir = mkdtempSync(join(tmpdir(), 'acia-validate-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('acia validate (built CLI)', () => {
  it('exits 0 for the example plan and says what it is', () => {
    const r = acia('validate', examplePlan);
    expect(r.stdout).toContain('plan-guarded-join.json: ok (plan, 6 tasks)');
    expect(r.code).toBe(0);
  });

  it('validates every example at once', () => {
    const ex = join(root, 'schemas/examples');
    const r = acia('validate', `${ex}/plan-guarded-join.json`, `${ex}/plan-set.json`, `${ex}/context-packet.json`, `${ex}/ledger.jsonl`);
    expect(r.stdout).toContain('ok (plan set, 2 plans, chose plan-A)');
    expect(r.stdout).toContain('ok (ledger, 3 entries)');
    expect(r.code).toBe(0);
  });

  it('exits 1 and names the cycle when one is added', () => {
    const file = planWith((p) => p.edges.push({ from: 't5', to: 't1' }));
    const r = acia('validate', file);
    expect(r.stdout).toContain('$.edges[6]: cycle: t1 -> t2 -> t3 -> t5 -> t1');
    expect(r.code).toBe(1);
  });

  it('exits 1 for an edge to a missing task, with its JSON path', () => {
    const file = planWith((p) => p.edges.push({ from: 't5', to: 't9' }));
    const r = acia('validate', file);
    expect(r.stdout).toContain("$.edges[6].to: edge to unknown task 't9'");
    expect(r.code).toBe(1);
  });

  it('exits 2 for malformed JSON and gives line:column', () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, '{\n  "tasks": [],\n  "edges": [,]\n}\n');
    const r = acia('validate', file);
    expect(r.stderr).toContain('bad.json:3:13: not valid JSON');
    expect(r.code).toBe(2);
  });

  it('exits 2 for a missing file', () => {
    const r = acia('validate', join(dir, 'nope.json'));
    expect(r.stderr).toContain('nope.json: no such file');
    expect(r.code).toBe(2);
  });

  it('gives the line of a bad ledger line', () => {
    const lines = readFileSync(join(root, 'schemas/examples/ledger.jsonl'), 'utf8').split('\n');
    lines[1] = lines[1]!.slice(0, 40);
    const file = join(dir, 'ledger.jsonl');
    writeFileSync(file, lines.join('\n'));
    const r = acia('validate', file);
    expect(r.stderr).toMatch(/ledger\.jsonl:2:\d+: not valid JSON/);
    expect(r.code).toBe(2);
  });

  it('exits 1 for a tampered ledger entry', () => {
    const text = readFileSync(join(root, 'schemas/examples/ledger.jsonl'), 'utf8').replace('"sources":3', '"sources":4');
    const file = join(dir, 'tampered.jsonl');
    writeFileSync(file, text);
    const r = acia('validate', file);
    expect(r.stdout).toContain('$[1].hash: hash does not match');
    expect(r.code).toBe(1);
  });

  it('exits 1 and names the fields it looked for when it cannot tell the kind', () => {
    const file = join(dir, 'what.json');
    writeFileSync(file, '{"hello": 1}');
    const r = acia('validate', file);
    expect(r.stderr).toContain('tasks+edges');
    expect(r.code).toBe(1);
    expect(acia('validate', '--kind', 'goal', file).stdout).toContain('$.id');
  });

  it('prints a machine-readable result with --json', () => {
    const file = planWith((p) => p.edges.push({ from: 't5', to: 't1' }));
    const r = acia('validate', '--json', file, examplePlan);
    const out = JSON.parse(r.stdout);
    expect(out.ok).toBe(false);
    expect(out.files[0].errors[0].code).toBe('CYCLE');
    expect(out.files[1].ok).toBe(true);
    expect(r.code).toBe(1);
  });

  it('rejects an unknown --kind as a usage error', () => {
    const r = acia('validate', '--kind', 'pizza', examplePlan);
    expect(r.stderr).toContain("unknown --kind 'pizza'");
    expect(r.code).toBe(2);
  });

  it('reports a usage error without a stack trace', () => {
    const r = acia('validate');
    expect(r.code).toBe(2);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
