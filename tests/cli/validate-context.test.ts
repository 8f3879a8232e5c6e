// `acia validate --context <packet>`: a plan's guards, expressions and keys are checked against the facts
// of the packet it will run on (in-process, through the same runValidate the command calls).
import { describe, expect, it } from 'vitest';
import { runValidate } from '../../src/cli/commands/validate-run.js';

const plan = {
  id: 'p',
  goalId: 'g',
  contextRef: `sha256:${'a'.repeat(64)}`,
  capabilityMapVersion: 'acia-caps@1',
  tasks: [{ id: 't1', capability: 'qa.verify', input: {} }, { id: 't2', capability: 'qa.verify', input: {} }],
  edges: [{ from: 't1', to: 't2', guard: "facts.region == 'EU'" }],
};

function io(files: Record<string, string>) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: {
      readText: (f: string) => (f in files ? Promise.resolve(files[f]!) : Promise.reject(Object.assign(new Error('nope'), { code: 'ENOENT' }))),
      out: (s: string) => void out.push(s),
      err: (s: string) => void err.push(s),
    },
  };
}

describe('acia validate --context', () => {
  it('a guard over a fact the packet lacks is an error (exit 1); with the fact it is ok (exit 0); without --context facts are not judged', async () => {
    const files = { 'plan.json': JSON.stringify(plan), 'lacks.yaml': 'facts:\n  testCommand: npm test\n', 'has.json': JSON.stringify({ facts: { region: 'EU' } }) };
    const lacks = io(files);
    expect(await runValidate(['plan.json'], { context: 'lacks.yaml' }, lacks.io)).toBe(1);
    expect(lacks.out.join('')).toContain("$.edges[0].guard: guard reads the fact 'region', which the Context Packet does not have (it has: testCommand)");
    expect(await runValidate(['plan.json'], { context: 'has.json' }, io(files).io)).toBe(0);
    expect(await runValidate(['plan.json'], {}, io(files).io)).toBe(0);
  });

  it('a --context file that is no packet is a usage error', async () => {
    await expect(runValidate(['plan.json'], { context: 'x.json' }, io({ 'plan.json': '{}', 'x.json': '[1]' }).io)).rejects.toMatchObject({ code: 'USAGE' });
    await expect(runValidate(['plan.json'], { context: 'missing.json' }, io({}).io)).rejects.toMatchObject({ code: 'USAGE' });
  });
});
