import { describe, expect, it } from 'vitest';
import { spawnCapture } from '../../../src/core/sandbox/spawn-collect.js';

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
const opts = { cwd: process.cwd(), env, timeoutMs: 10_000 };

describe('spawnCapture', () => {
  it('keeps stdout and stderr apart and whole, and feeds stdin', async () => {
    const big = 'x'.repeat(3 * 1024 * 1024);
    const r = await spawnCapture(['/bin/sh', '-c', 'cat; echo err >&2; exit 3'], { ...opts, input: big });
    expect(r).toMatchObject({ exitCode: 3, stderr: 'err\n', timedOut: false });
    expect(r.stdout.length).toBe(big.length);
  });

  it('kills the whole process group on timeout and on abort, never rejecting', async () => {
    const t0 = Date.now();
    const slow = await spawnCapture(['/bin/sh', '-c', 'sleep 30 & sleep 30'], { ...opts, timeoutMs: 200 });
    expect(slow).toMatchObject({ exitCode: null, timedOut: true });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const aborted = await spawnCapture(['/bin/sh', '-c', 'sleep 30'], { ...opts, signal: ac.signal });
    expect(aborted).toMatchObject({ exitCode: null, timedOut: false });
    // Far below the 30 s sleeps either would wait out, with room for a loaded machine.
    expect(Date.now() - t0).toBeLessThan(20_000);
  });

  it('reports a program that cannot start', async () => {
    const r = await spawnCapture(['/nonexistent/acia-no-such-binary'], opts);
    expect(r.exitCode).toBeNull();
    expect(r.stderr).toContain('failed to start /nonexistent/acia-no-such-binary');
  });
});
