// Class 12: a sandboxed command has a memory limit and a bounded /tmp, and hitting either is a clear tool error.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sandboxAvailable } from '../helpers/sandbox-available.js';
import { CLI, makeFixture, type Fixture } from './fixture.js';
import { runAttack } from './run-attack.js';

const sandboxed = sandboxAvailable() && fs.existsSync(CLI);
let fx: Fixture;
afterEach(() => fx.cleanup());

/** What the model was shown of every tool result the run recorded, in order. */
function toolOutputs(repo: string): string[] {
  const runDir = path.join(repo, '.acia', 'runs', fs.readdirSync(path.join(repo, '.acia', 'runs'))[0] ?? '');
  return fs
    .readFileSync(path.join(runDir, 'ledger.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.includes('"TOOL_RESULT"'))
    .map((l) => (JSON.parse(l) as { data: { outputRef: string } }).data.outputRef)
    .map((ref) => (JSON.parse(fs.readFileSync(path.join(runDir, 'blobs', ref.replace(/^sha256:/, '')), 'utf8')) as { forModel: string }).forModel);
}

describe.skipIf(!sandboxed)('sandbox resource limits', () => {
  it('stops a memory hog and a /tmp filler at the configured limits, as tool errors that say so', async () => {
    fx = makeFixture();
    const xdg = path.join(fx.base, 'xdg');
    fs.mkdirSync(path.join(xdg, 'acia'), { recursive: true });
    fs.writeFileSync(path.join(xdg, 'acia', 'config.json'), JSON.stringify({ sandboxLimits: { memoryMb: 256, tmpMb: 16 } }));
    const r = await runAttack(
      fx,
      [
        [{ name: 'run_command', input: { command: `${process.execPath} -e "Buffer.alloc(2 ** 30, 1); console.log('ALLOCATED')"` } }],
        [{ name: 'run_command', input: { command: 'head -c 64M /dev/zero > /tmp/fill && echo FILLED' } }],
        [{ name: 'run_command', input: { command: 'head -c 8M /dev/zero > /tmp/small && echo SMALL-OK' } }],
      ],
      { env: { XDG_CONFIG_HOME: xdg } },
    );
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    const [mem, tmp, small] = toolOutputs(fx.repo);
    expect(mem).not.toContain('ALLOCATED');
    expect(mem).toContain('ran out of memory; each command may use 256 MiB');
    expect(tmp).not.toContain('FILLED');
    expect(tmp).toContain('the sandbox /tmp holds 16 MiB');
    expect(small).toContain('SMALL-OK');
  });
}, 120_000); // each case drives whole acia runs; a loaded machine makes them slow
