// Drives the BUILT library in child processes: a writer killed with SIGKILL mid-loop, and a live writer
// that holds the lock. Run `npm run build` first.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openRunLedger } from '../../src/core/ledger/file-ledger.js';
import { verifyRun } from '../../src/core/ledger/verify.js';
import { fixedClock, tempDir } from '../helpers/sample-run.js';

const dist = pathToFileURL(resolve('dist/index.js')).href;
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});

/** Appends in a loop (bursts of un-awaited appends with large payloads), printing the count durable so far. */
const writerScript = `
const { openRunLedger } = await import(${JSON.stringify(dist)});
const [dir, id] = process.argv.slice(1);
const ledger = await openRunLedger(dir, id, { clock: { now: () => new Date() }, create: true });
process.stdout.write('open\\n');
for (let i = 0; ; i += 8) {
  await Promise.all(Array.from({ length: 8 }, (_, k) => ledger.append({ actor: 'team', type: 'GOAL_AMENDED', data: { by: 'loop', delta: String(i + k).padEnd(20000, 'x') } })));
  process.stdout.write('n=' + (i + 8) + '\\n');
}
`;

function startWriter(dir: string, id: string): { child: ChildProcess; waitFor: (re: RegExp) => Promise<string> } {
  const child = spawn(process.execPath, ['--input-type=module', '-e', writerScript, dir, id], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const waitFor = (re: RegExp) =>
    new Promise<string>((res, rej) => {
      const timer = setInterval(() => {
        const m = re.exec(out);
        if (m) {
          clearInterval(timer);
          res(m[0]);
        } else if (child.exitCode !== null) {
          clearInterval(timer);
          rej(new Error(`writer exited ${child.exitCode}: ${err}`));
        }
      }, 5);
    });
  return { child, waitFor };
}

describe('ledger crash safety (child processes)', () => {
  it('recovers after kill -9 of a writer mid-loop: no partial entry, chain intact, stale lock taken over', async () => {
    const dir = join(tempDir(), 'crash');
    const { child, waitFor } = startWriter(dir, 'crash');
    await waitFor(/n=(4\d|[5-9]\d|\d{3,})\n/);
    const acked = Number(/n=(\d+)\n(?![\s\S]*n=)/.exec(await waitFor(/[\s\S]*n=\d+\n/))![1]);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const raw = readFileSync(join(dir, 'ledger.jsonl'), 'utf8');
    const wasTorn = !raw.endsWith('\n');

    const ledger = await openRunLedger(dir, 'crash', { clock: fixedClock(Date.UTC(2100, 0, 1)), create: false });
    const entries = ledger.entries();
    await ledger.close();
    const recovered = entries.filter((e) => e.type === 'LEDGER_RECOVERED');
    expect(recovered).toHaveLength(wasTorn ? 1 : 0);
    // Every append the child saw acknowledged is on disk (durability), in order.
    const amended = entries.filter((e) => e.type === 'GOAL_AMENDED');
    expect(amended.length).toBeGreaterThanOrEqual(acked);
    amended.forEach((e, i) => expect((e.data as { delta: string }).delta).toBe(String(i).padEnd(20000, 'x')));
    expect(readFileSync(join(dir, 'ledger.jsonl'), 'utf8').endsWith('\n')).toBe(true);
    const report = await verifyRun(dir);
    expect(report.problems).toEqual([]);
  });

  it('refuses a second writer while another process holds the run', async () => {
    const dir = join(tempDir(), 'busy');
    const { child, waitFor } = startWriter(dir, 'busy');
    await waitFor(/open\n/);
    await expect(openRunLedger(dir, 'busy', { clock: fixedClock(), create: true })).rejects.toMatchObject({
      code: 'LEDGER_LOCKED',
      message: expect.stringContaining(`in use by pid ${child.pid}`) as unknown,
    });
  });
});
