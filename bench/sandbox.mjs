// Median overhead of a sandboxed `true` (BwrapRunner) against a bare spawn of `true`, over N runs.
// Usage: npm run build && node bench/sandbox.mjs [runs]   (bench/run.mjs imports sandboxOverhead)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BwrapRunner, HostRunner, detectSandbox } from '../dist/index.js';

const bare = () =>
  new Promise((resolve, reject) => {
    const t = process.hrtime.bigint();
    const c = spawn('true', [], { stdio: 'ignore' });
    c.on('error', reject);
    c.on('close', () => resolve(Number(process.hrtime.bigint() - t) / 1e6));
  });
const viaRunner = (runner, root) => async () => {
  const t = process.hrtime.bigint();
  await runner.run('true', { cwd: root, timeoutMs: 10_000 });
  return Number(process.hrtime.bigint() - t) / 1e6;
};
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const round = (x) => Math.round(x * 100) / 100;

/** Returns null (with the reason) when bubblewrap cannot start here. */
export async function sandboxOverhead(runs = 30) {
  const status = detectSandbox();
  if (status.status !== 'available') return { unavailable: status.reason };
  const root = mkdtempSync(join(tmpdir(), 'acia-bench-'));
  const fns = { bare, host: viaRunner(new HostRunner(), root), bwrap: viaRunner(new BwrapRunner({ root }), root) };
  const xs = { bare: [], host: [], bwrap: [] };
  try {
    for (const fn of Object.values(fns)) for (let i = 0; i < 3; i++) await fn(); // warm-up
    // Interleaved, so a noisy neighbour hits all three alike.
    for (let i = 0; i < runs; i++) for (const [k, fn] of Object.entries(fns)) xs[k].push(await fn());
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const result = {
    bench: 'sandbox-overhead',
    runs,
    medianBareMs: round(median(xs.bare)),
    medianHostRunnerMs: round(median(xs.host)),
    medianBwrapRunnerMs: round(median(xs.bwrap)),
    medianOverheadMs: round(median(xs.bwrap) - median(xs.bare)),
    goalMs: 25,
  };
  result.withinGoal = result.medianOverheadMs <= result.goalMs;
  return result;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const result = await sandboxOverhead(Number(process.argv[2] ?? 30));
  if (result.unavailable) {
    console.error(`sandbox unavailable: ${result.unavailable}`);
    process.exit(2);
  }
  console.log(`sandboxed true: median overhead ${result.medianOverheadMs} ms over a bare spawn (goal <= 25 ms)`);
  console.log(JSON.stringify(result, null, 2));
}
