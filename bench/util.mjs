// Shared helpers of the benchmarks: medians, timed child processes, temp dirs and ledger reading.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CLI = join(ROOT, 'dist', 'bin', 'acia.js');
export const SCENARIOS = join(ROOT, 'workspace', 'scenarios');

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

export const round = (x, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

export const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

export function scratch(prefix) {
  return mkdtempSync(join(tmpdir(), `acia-bench-${prefix}-`));
}

/**
 * Runs a command to completion and times it from spawn to exit. Wall-clock start (epoch ms) is kept so
 * ledger timestamps can be placed on the same axis.
 */
export function timedSpawn(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const startEpoch = Date.now();
    const t0 = nowMs();
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, ms: nowMs() - t0, startEpoch, endEpoch: Date.now(), stdout, stderr }));
  });
}

/** Spawns the built CLI and fails loudly when it does not exit as expected. */
export async function acia(args, opts = {}, expectCode = 0) {
  const r = await timedSpawn(process.execPath, [CLI, ...args], opts);
  if (r.code !== expectCode) throw new Error(`acia ${args.join(' ')} exited ${r.code}: ${r.stderr.slice(-800)}`);
  return r;
}

/** The entries of the only run in a repo's .acia/runs. */
export function onlyLedger(repo) {
  const runs = readdirSync(join(repo, '.acia', 'runs'));
  if (runs.length !== 1) throw new Error(`expected one run in ${repo}, found ${runs.length}`);
  return readFileSync(join(repo, '.acia', 'runs', runs[0], 'ledger.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

/** Wall time of the ledger's run (RUN_STARTED to RUN_COMPLETED), tool time and model turns. */
export function ledgerTimes(entries) {
  const ts = (type) => Date.parse(entries.find((e) => e.type === type)?.ts ?? NaN);
  let toolMs = 0;
  let llmCalls = 0;
  let llmMs = 0;
  for (const e of entries) {
    if (e.type === 'TOOL_RESULT') toolMs += e.data.durationMs;
    if (e.type === 'LLM_CALL') {
      llmCalls += 1;
      llmMs += e.data.durationMs;
    }
  }
  return { startedAt: ts('RUN_STARTED'), completedAt: ts('RUN_COMPLETED'), toolMs, llmCalls, llmMs, entries: entries.length };
}

/** A scenario's script with every latency set to `latencyMs`, written to `file`. */
export function scriptWithLatency(name, latencyMs) {
  const script = JSON.parse(readFileSync(join(SCENARIOS, name, 'script.json'), 'utf8'));
  return { ...script, turns: script.turns.map((t) => ({ ...t, latencyMs })) };
}
