// Classes 7 and 9: descriptors ACIA inherited never reach a sandboxed command; FIFOs cannot freeze a run,
// and --max-minutes bounds every tool call.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sandboxAvailable } from '../helpers/sandbox-available.js';
import { CLI, makeFixture, type Fixture } from './fixture.js';
import { runAttack } from './run-attack.js';

const sandboxed = sandboxAvailable() && fs.existsSync(CLI);
let fx: Fixture;
afterEach(() => fx.cleanup());

describe.skipIf(!sandboxed)('inherited descriptors, FIFOs and the deadline', () => {
  it('a sandboxed command cannot write through a descriptor acia inherited', async () => {
    fx = makeFixture();
    const target = path.join(fx.outside, 'target.txt');
    fs.writeFileSync(target, 'ORIGINAL\n');
    const fd = fs.openSync(target, 'r+');
    try {
      const slots = Array.from({ length: 40 }, (_v, i) => (i === 0 || i === 20 || i === 39 ? fd : undefined));
      const attack = 'ls -l /proc/self/fd; for f in /proc/self/fd/*; do echo pwned >> "$f"; done 2>/dev/null; echo tried';
      const r = await runAttack(fx, [[{ name: 'run_command', input: { command: attack } }]], { fds: slots });
      expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    } finally {
      fs.closeSync(fd);
    }
    expect(fs.readFileSync(target, 'utf8')).toBe('ORIGINAL\n');
  });

  it('read_file, write_file, edit_file and search on a FIFO fail as tool errors instead of freezing the run', async () => {
    fx = makeFixture();
    const started = Date.now();
    const r = await runAttack(
      fx,
      [
        [{ name: 'run_command', input: { command: 'mkfifo pipe && echo made' } }],
        [{ name: 'read_file', input: { path: 'pipe' } }],
        [{ name: 'edit_file', input: { path: 'pipe', old: 'a', new: 'b' } }],
        [{ name: 'write_file', input: { path: 'pipe', content: 'x' } }],
        [{ name: 'search', input: { pattern: 'x', path: 'pipe' } }],
        [{ name: 'write_file', input: { path: 'ok.txt', content: 'fine\n' } }],
      ],
      // A FIFO that blocked would hang the run for good: 90 s tells that apart from a whole run on a loaded machine.
      { timeoutMs: 90_000 },
    );
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    expect(Date.now() - started).toBeLessThan(90_000);
    const runId = fs.readdirSync(path.join(fx.repo, '.acia', 'runs'))[0] ?? '';
    const ledger = fs.readFileSync(path.join(fx.repo, '.acia', 'runs', runId, 'ledger.jsonl'), 'utf8');
    const results = ledger.split('\n').filter((l) => l.includes('"TOOL_RESULT"')).map((l) => (JSON.parse(l) as { data: { name: string; ok: boolean } }).data);
    expect(results.map((d) => [d.name, d.ok])).toEqual([
      ['run_command', true],
      ['read_file', false],
      ['edit_file', false],
      ['write_file', false],
      ['search', false],
      ['write_file', true],
    ]);
  });

  it('--max-minutes stops a run whose command would run far longer', async () => {
    fx = makeFixture();
    const started = Date.now();
    // 3 s of budget against a 600 s command: 90 s is far from both, whatever the machine's load.
    const r = await runAttack(fx, [[{ name: 'run_command', input: { command: 'sleep 600' } }]], { args: ['--max-minutes', '0.05'], timeoutMs: 90_000 });
    expect(Date.now() - started).toBeLessThan(90_000);
    expect(r.exitCode, r.stderr + r.stdout).toBe(4);
  });
}, 120_000); // each case drives whole acia runs; a loaded machine makes them slow
