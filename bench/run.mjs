// `npm run bench`: runs every benchmark, writes bench/results.json (one flat object of named figures)
// and prints a table. Usage: npm run bench [-- --only name,name [--write]] [--quick]
// --only runs some benchmarks and prints them; with --write it also replaces those figures in
// results.json, each marked with the commit and date it was measured at (`_meta` lists such updates).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { ROOT, round } from './util.mjs';
import { parallelSpeedup } from './parallel.mjs';
import { inProcessFigures } from './in-process.mjs';
import { orchestratorOverhead, peakRss } from './orchestrator.mjs';
import { ledgerBench, resumeBench } from './ledger.mjs';
import { sandboxOverhead } from './sandbox.mjs';
import { coldStart } from './cold-start.mjs';
import { CLAUDE_CODE_VERSION, firstRequest } from './first-request.mjs';
import { marginalTurnCost } from './marginal.mjs';
import { cacheFigures } from './cache.mjs';
import { chaosFigures } from './chaos.mjs';
import { mcpOverhead } from './mcp.mjs';
import { bestOfOverhead } from './best-of.mjs';
import { fleetFigures } from './fleet.mjs';
import { uiFigures } from './ui.mjs';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const onlyArg = args.indexOf('--only');
const only = onlyArg === -1 ? null : new Set(args[onlyArg + 1].split(','));
const write = only === null || args.includes('--write');
const log = (m) => process.stderr.write(`${m}\n`);

async function ledgerFigures() {
  const l = await ledgerBench(quick ? { serial: 200, each: 200, each64: 50, burst: 5000, entries: 20_000 } : { serial: 500, each: 500, each64: 100, burst: 20_000, entries: 100_000 });
  const best = l.goals.appendsPerSecond.groupCommitBest;
  const r = await resumeBench();
  log(`  group commit ${best}/s, fsync each ${l.fsyncPerEntry.perSecond}/s, verify ${l.verify.perSecond}/s, resume 10k ${r.medianMs} ms`);
  return {
    ledger_appends_per_s: {
      value: best,
      unit: 'entries/s',
      how: 'durable appends to a file ledger with group commit: best of 8 writers, 64 writers and one burst of concurrent appends (bench/ledger.mjs)',
      goal: '>= 5000',
      met: best >= 5000,
      detail: { writers8: l.groupCommit8Writers.perSecond, writers64: l.groupCommit64Writers.perSecond, burst: l.groupCommitBurst.perSecond },
    },
    ledger_appends_fsync_each_per_s: { value: l.fsyncPerEntry.perSecond, unit: 'entries/s', how: `one writer awaiting each append (one fsync per entry), ${l.fsyncPerEntry.entries} entries`, goal: null, met: null },
    verify_entries_per_s: {
      value: l.verify.perSecond,
      unit: 'entries/s',
      how: `verifyRun over a ${l.verify.entries}-entry ledger (parse, schema, hash chain, blobs)`,
      goal: '>= 150000',
      met: l.verify.perSecond >= 150_000,
    },
    resume_ms_10k: {
      value: r.medianMs,
      unit: 'ms',
      how: `openRunLedger (read, check chain, lock) + foldRun of a ${r.entries}-entry ledger of LLM_CALL/TOOL_CALL/TOOL_RESULT, median of ${r.runs}`,
      goal: '<= 150',
      met: r.medianMs <= 150,
      detail: { medianOpenMs: r.medianOpenMs },
    },
    _fsyncMs: 1000 / l.fsyncPerEntry.perSecond,
  };
}

async function firstRequestFigures() {
  const r = await firstRequest({ runs: quick ? 3 : 7, log });
  const { acia, acia10k, claude } = r.medianMs;
  const ratio = claude === null ? null : acia / claude;
  return {
    time_to_first_request_ratio_vs_claude_code: {
      value: ratio === null ? null : round(ratio),
      unit: 'x',
      how:
        ratio === null
          ? 'n/a: Claude Code could not be installed from npm or did not reach the stand-in endpoint (offline?)'
          : `median time from process start to the first POST /v1/messages at a stand-in endpoint on 127.0.0.1: \`acia run\` (default sandbox) over \`claude -p\` (Claude Code ${CLAUDE_CODE_VERSION}), same 20-file repo, ${r.runs} interleaved runs each`,
      goal: '<= 0.5',
      met: ratio === null ? null : ratio <= 0.5,
      detail: { medianMs: { acia: round(acia, 1), claudeCode: claude === null ? null : round(claude, 1) }, samplesMs: r.samples },
    },
    time_to_first_request_ms_10k_files: {
      value: round(acia10k, 1),
      unit: 'ms',
      how: `median time from process start to the first model request of \`acia run\` (default sandbox) on a 10,000-file repo, ${r.runs} runs interleaved with the above`,
      goal: '<= 1200',
      met: acia10k <= 1200,
    },
  };
}

async function sandboxFigure() {
  const s = await sandboxOverhead(quick ? 10 : 30);
  if (s.unavailable) return { sandbox_exec_overhead_ms: { value: null, unit: 'ms', how: `not measured: ${s.unavailable}`, goal: '<= 25', met: null } };
  log(`  bwrap ${s.medianBwrapRunnerMs} ms, bare ${s.medianBareMs} ms`);
  return {
    sandbox_exec_overhead_ms: {
      value: s.medianOverheadMs,
      unit: 'ms',
      how: `median BwrapRunner.run('true') minus median bare spawn of true, ${s.runs} interleaved runs`,
      goal: '<= 25',
      met: s.medianOverheadMs <= 25,
      detail: { medianBareMs: s.medianBareMs, medianHostRunnerMs: s.medianHostRunnerMs, medianBwrapRunnerMs: s.medianBwrapRunnerMs },
    },
  };
}

async function mcpFigure() {
  const m = await mcpOverhead(quick ? 100 : 300);
  if (m.unavailable) return { mcp_call_overhead_ms: { value: null, unit: 'ms', how: `not measured: ${m.unavailable}`, goal: '<= 5', met: null } };
  log(`  built-in read_file ${m.medianBuiltinMs} ms, MCP read_text_file ${m.medianMcpMs} ms`);
  return {
    mcp_call_overhead_ms: {
      value: m.medianOverheadMs,
      unit: 'ms',
      how: `median callTool(mcp__fs__read_text_file) (server-filesystem over stdio, started, ${m.sandbox === 'bwrap' ? 'sandboxed' : 'unsandboxed'}) minus median callTool(read_file) on the same file, ${m.runs} interleaved calls (bench/mcp.mjs)`,
      goal: '<= 5',
      met: m.medianOverheadMs <= 5,
      detail: { medianBuiltinMs: m.medianBuiltinMs, medianMcpMs: m.medianMcpMs },
    },
  };
}

const results = {};
let fsyncMs = null;
const benches = [
  ['ledger', async () => {
    const { _fsyncMs, ...figs } = await ledgerFigures();
    fsyncMs = _fsyncMs;
    return figs;
  }],
  ['sandbox', sandboxFigure],
  ['cold-start', () => coldStart({ runs: quick ? 7 : 15, log })],
  ['mcp', mcpFigure],
  ['first-request', firstRequestFigures],
  ['marginal', () => marginalTurnCost({ runs: quick ? 1 : 3, log })],
  ['cache', () => cacheFigures({ log })],
  ['in-process', () => inProcessFigures({ log })],
  ['orchestrator', () => orchestratorOverhead({ runs: quick ? 1 : 3, fsyncMs, log })],
  ['rss', () => peakRss({ log })],
  ['parallel', () => parallelSpeedup({ pairs: quick ? 1 : 3, log })],
  ['best-of', () => bestOfOverhead({ pairs: quick ? 1 : 2, log })],
  ['chaos', () => chaosFigures({ runs: quick ? 40 : 200, log })],
  ['fleet', () => fleetFigures({ quick, log })],
  ['ui', () => uiFigures({ log, appends: quick ? 20 : 60 })],
];
const t0 = Date.now();
for (const [name, fn] of benches) {
  if (only && !only.has(name)) continue;
  log(`${name}...`);
  Object.assign(results, await fn());
}

const commit = (() => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
})();
results._meta = { date: new Date().toISOString(), node: process.version, cpus: cpus().length, commit, quick, seconds: Math.round((Date.now() - t0) / 1000) };
const resultsFile = join(ROOT, 'bench', 'results.json');
if (!only) writeFileSync(resultsFile, `${JSON.stringify(results, null, 2)}\n`);
else if (write) {
  // A partial run updates its own figures and says so; every other figure keeps the full run's _meta.
  const all = JSON.parse(readFileSync(resultsFile, 'utf8'));
  const figures = Object.keys(results).filter((k) => k !== '_meta');
  for (const k of figures) all[k] = { ...results[k], measured: { commit, date: results._meta.date, quick } };
  all._meta.updates = [...(all._meta.updates ?? []), { figures, ...results._meta }];
  writeFileSync(resultsFile, `${JSON.stringify(all, null, 2)}\n`);
}

const rows = Object.entries(results).filter(([k]) => k !== '_meta');
const w = Math.max(...rows.map(([k]) => k.length));
const fmt = (v) => (v === null ? 'n/a' : typeof v === 'number' ? String(round(v, 3)) : String(v));
process.stdout.write(`${'figure'.padEnd(w)}  ${'value'.padStart(10)}  ${'unit'.padEnd(18)}  ${'goal'.padEnd(10)}  met\n`);
for (const [k, f] of rows) {
  const met = f.met === null ? '-' : f.met ? 'yes' : 'NO';
  process.stdout.write(`${k.padEnd(w)}  ${fmt(f.value).padStart(10)}  ${f.unit.padEnd(18)}  ${(f.goal ?? '-').padEnd(10)}  ${met}\n`);
}
process.stdout.write(`(${results._meta.seconds} s; node ${process.version}, ${results._meta.cpus} cpus${only ? (write ? '; --only --write: these figures replaced in results.json' : '; --only: results.json not written') : ''})\n`);
