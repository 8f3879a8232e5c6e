// Ledger benchmarks: durable appends/s (fsync per entry vs group commit) and verify entries/s.
// Usage: npm run build && node bench/ledger.mjs [--dir <scratch dir on the disk to measure>] [--entries 100000]
// Prints one JSON object. Goals: >= 5,000 durable appends/s with group commit, >= 150,000 verified entries/s (issue 29).
// bench/run.mjs imports ledgerBench and resumeBench.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openRunLedger, verifyRun } from '../dist/index.js';
import { foldRun } from '../dist/team/run-state.js';

let root = '';
const clock = { now: () => new Date() };
const entry = (i) => ({ actor: 'dev:t1', type: 'TOOL_CALL', data: { taskId: 't1', toolUseId: `tu${i}`, name: 'read_file', input: { path: `src/file-${i}.ts` } } });

async function timed(fn) {
  const t0 = process.hrtime.bigint();
  const n = await fn();
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  return { entries: n, seconds: Number(s.toFixed(3)), perSecond: Math.round(n / s) };
}

async function fsyncPerEntry(n) {
  const ledger = await openRunLedger(join(root, 'serial'), 'serial', { clock, create: true });
  const r = await timed(async () => {
    for (let i = 0; i < n; i += 1) await ledger.append(entry(i));
    return n;
  });
  await ledger.close();
  return r;
}

async function concurrentAppenders(writers, each) {
  const ledger = await openRunLedger(join(root, `conc${writers}`), `conc${writers}`, { clock, create: true });
  const r = await timed(async () => {
    await Promise.all(Array.from({ length: writers }, async (_, w) => {
      for (let i = 0; i < each; i += 1) await ledger.append(entry(w * each + i));
    }));
    return writers * each;
  });
  await ledger.close();
  return { writers, ...r };
}

async function burst(n) {
  const ledger = await openRunLedger(join(root, 'burst'), 'burst', { clock, create: true });
  const r = await timed(async () => {
    await Promise.all(Array.from({ length: n }, (_, i) => ledger.append(entry(i))));
    return n;
  });
  await ledger.close();
  return r;
}

async function verifySpeed(n) {
  const dir = join(root, 'verify');
  const ledger = await openRunLedger(dir, 'verify', { clock, create: true });
  for (let i = 0; i < n; i += 5000) await Promise.all(Array.from({ length: Math.min(5000, n - i) }, (_, k) => ledger.append(entry(i + k))));
  await ledger.close();
  let report;
  const r = await timed(async () => {
    report = await verifyRun(dir);
    return report.entries;
  });
  if (!report.ok) throw new Error(`verify failed: ${JSON.stringify(report.problems[0])}`);
  return r;
}

/** Options are counts; `dir` is where the scratch ledgers go (the disk being measured). */
export async function ledgerBench(o = {}) {
  root = mkdtempSync(join(o.dir ?? tmpdir(), 'acia-bench-'));
  try {
    const result = {
      node: process.version,
      scratch: root,
      fsyncPerEntry: await fsyncPerEntry(o.serial ?? 1000),
      groupCommit8Writers: await concurrentAppenders(8, o.each ?? 1000),
      groupCommit64Writers: await concurrentAppenders(64, o.each64 ?? 200),
      groupCommitBurst: await burst(o.burst ?? 20_000),
      verify: await verifySpeed(o.entries ?? 100_000),
    };
    result.goals = {
      appendsPerSecond: { goal: 5000, groupCommitBest: Math.max(result.groupCommit8Writers.perSecond, result.groupCommit64Writers.perSecond, result.groupCommitBurst.perSecond) },
      verifyPerSecond: { goal: 150_000, measured: result.verify.perSecond },
    };
    return result;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** A run's worth of realistic entries: model calls, each followed by a tool call and its result. */
async function realisticLedger(dir, n) {
  const ledger = await openRunLedger(dir, 'resume', { clock, create: true });
  const blob = await ledger.putBlob('x'.repeat(2000));
  const sha = blob;
  const batch = [];
  for (let i = ledger.entries().length; i < n; i++) {
    const turn = Math.floor(i / 3);
    const kind = i % 3;
    const e =
      kind === 0
        ? { actor: 'dev:t1', type: 'LLM_CALL', data: { taskId: 't1', caller: 'dev:t1', model: 'claude-sonnet-5-5', requestHash: sha, responseRef: sha, usage: { inputTokens: 120, outputTokens: 80, cacheReadTokens: 1500, cacheWriteTokens: 90 }, costUsd: 0.0012, stopReason: 'tool_use', durationMs: 700 } }
        : kind === 1
          ? { actor: 'dev:t1', type: 'TOOL_CALL', data: { taskId: 't1', toolUseId: `tu${turn}`, name: 'read_file', input: { path: `src/file-${turn % 50}.ts`, offset: 1, limit: 200 } } }
          : { actor: 'dev:t1', type: 'TOOL_RESULT', data: { taskId: 't1', toolUseId: `tu${turn}`, name: 'read_file', ok: true, outputRef: sha, data: { lines: 200 }, durationMs: 3 } };
    batch.push(ledger.append(e));
    if (batch.length >= 2000) await Promise.all(batch.splice(0));
  }
  await Promise.all(batch);
  const count = ledger.entries().length;
  await ledger.close();
  return count;
}

/** resume_ms_10k: open (read, check, lock) and fold a 10,000-entry ledger, median of `runs`. */
export async function resumeBench(o = {}) {
  const base = mkdtempSync(join(o.dir ?? tmpdir(), 'acia-bench-resume-'));
  try {
    const dir = join(base, 'run');
    const entries = await realisticLedger(dir, o.entries ?? 10_000);
    const times = [];
    const opens = [];
    for (let i = 0; i < (o.runs ?? 5); i++) {
      const t0 = process.hrtime.bigint();
      const ledger = await openRunLedger(dir, 'resume', { clock, create: false });
      const t1 = process.hrtime.bigint();
      foldRun(ledger.entries());
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      opens.push(Number(t1 - t0) / 1e6);
      await ledger.close();
    }
    const med = (xs) => Math.round([...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1] * 10) / 10;
    return { entries, runs: times.length, medianMs: med(times), medianOpenMs: med(opens) };
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const opt = (name, dflt) => {
    const i = args.indexOf(`--${name}`);
    return i === -1 ? dflt : args[i + 1];
  };
  const num = (name) => (opt(name) === undefined ? undefined : Number(opt(name)));
  const result = await ledgerBench({ dir: opt('dir'), entries: num('entries'), serial: num('serial'), each: num('each'), each64: num('each64'), burst: num('burst') });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
