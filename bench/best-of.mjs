// Best-of-3 against one candidate: the same Dev task done by three real Claude Code (ACP) candidates in
// parallel worktrees, against one, with the same scripted model latency per turn. The figure is the
// ratio of the Dev task's wall time (TASK_STARTED to TASK_COMPLETED in the ledger) and of the run's.
// Measured with both of Claude Code's ACP adapters when installed: the figure is the current one's
// (@agentclientprotocol/claude-agent-acp, which runs Claude Code's native build), and the earlier one's
// (@zed-industries/claude-code-acp, which runs Claude Code as an 11.5 MB script on node) is in its detail.
import { cpSync, mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { CLI, ROOT, SCENARIOS, median, round, scratch, timedSpawn } from './util.mjs';

/**
 * The adapters, current first. `model`: the prefix of the model each one's Claude Code asks for by default
 * (the scripted turns are matched on it; its side calls to a small model get their own turns).
 */
const ADAPTERS = [
  { pkg: '@agentclientprotocol/claude-agent-acp', bin: 'claude-agent-acp', model: 'claude-opus', build: 'native' },
  { pkg: '@zed-industries/claude-code-acp', bin: 'claude-code-acp', model: 'claude-sonnet', build: 'node script' },
].map((a) => ({ ...a, path: join(ROOT, 'node_modules', '.bin', a.bin) }));
const GOAL = 'Add a titleCase(text) helper that capitalises every word, with a test';

/** The Claude Code version an adapter runs: its agent SDK's manifest, as that adapter resolves the SDK. */
function claudeCodeVersion(adapter) {
  try {
    const req = createRequire(join(ROOT, 'node_modules', adapter.pkg, 'package.json'));
    const manifest = join(req.resolve('@anthropic-ai/claude-agent-sdk'), '..', 'manifest.json');
    return JSON.parse(readFileSync(manifest, 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

function script(adapter, names, latencyMs) {
  const happy = JSON.parse(readFileSync(join(SCENARIOS, 'happy', 'script.json'), 'utf8'));
  const writes = happy.turns.flatMap((t) => (t.caller === 'dev:t1' ? (t.toolCalls ?? []).filter((c) => c.name === 'write_file') : []));
  const turns = [...happy.turns.filter((t) => t.caller === 'pm').map((t) => ({ ...t, latencyMs: 0 }))];
  for (const name of names) {
    for (const w of writes) turns.push({ caller: `acp:${name}:${adapter.model}*`, text: '', latencyMs, toolCalls: [{ name: 'Write', input: { file_path: w.input.path, content: w.input.content } }] });
    turns.push({ caller: `acp:${name}:${adapter.model}*`, text: 'done', latencyMs });
    for (let i = 0; i < 8; i++) turns.push({ caller: `acp:${name}:claude-haiku*`, text: 'ok', latencyMs: 0 });
  }
  turns.push(...happy.turns.filter((t) => t.caller.startsWith('qa:')).map((t) => ({ ...t, latencyMs: 0 })));
  return { version: 1, model: happy.model, turns };
}

async function once(adapter, names, latencyMs) {
  const { startFakeAnthropicServer } = await import(join(ROOT, 'dist', 'core', 'llm', 'fake-server.js'));
  const server = await startFakeAnthropicServer({ script: script(adapter, names, latencyMs) });
  const dir = scratch('best-of');
  const repo = join(dir, 'repo');
  cpSync(join(SCENARIOS, '_base'), repo, { recursive: true });
  for (const args of [['init', '-q', '-b', 'main'], ['add', '-A'], ['-c', 'user.name=b', '-c', 'user.email=b@example.com', 'commit', '-q', '-m', 'initial']]) execFileSync('git', args, { cwd: repo });
  mkdirSync(join(dir, 'xdg', 'acia'), { recursive: true });
  writeFileSync(join(dir, 'xdg', 'acia', 'config.json'), JSON.stringify({ devAgents: Object.fromEntries(names.map((n) => [n, adapter.path])), testCommand: 'node run-tests.js' }));
  try {
    const r = await timedSpawn(process.execPath, [CLI, 'run', GOAL, '--repo', repo, '--dev-agent', names.join(','), '--model', 'anthropic:claude-sonnet-5-5', '--quiet'], {
      env: { PATH: process.env.PATH, HOME: join(dir, 'home'), LANG: 'C.UTF-8', ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'bench', XDG_CONFIG_HOME: join(dir, 'xdg') },
    });
    if (r.code !== 0) throw new Error(`best-of bench run failed (exit ${r.code}): ${r.stderr.slice(-500)}`);
    const runs = join(repo, '.acia', 'runs');
    const runId = execFileSync('ls', [runs], { encoding: 'utf8' }).trim();
    const entries = readFileSync(join(runs, runId, 'ledger.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    checkMeasured(entries, adapter, names);
    const at = (type) => Date.parse(entries.find((e) => e.type === type && e.data.taskId === 't1').ts);
    return { taskMs: at('TASK_COMPLETED') - at('TASK_STARTED'), runMs: r.ms };
  } finally {
    await server.close();
  }
}

/**
 * Throws unless every candidate did the Dev task through this adapter: its model calls on the model the
 * adapter's Claude Code asks for, and (best of N) its work passing the tests. A run still exits 0 when one
 * candidate of three did the task and the others died at boot, and timing that would report best of 3
 * for what was one candidate's work.
 */
function checkMeasured(entries, adapter, names) {
  const actors = names.length === 1 ? ['dev:t1'] : names.map((n) => `dev:t1-${n}`);
  const idle = actors.filter((actor) => !entries.some((e) => e.type === 'LLM_CALL' && e.actor === actor && String(e.data.model).startsWith(adapter.model)));
  if (idle.length > 0) throw new Error(`best-of bench: ${idle.join(', ')} made no ${adapter.model} call through ${adapter.bin}; not a measurement of ${names.length} candidate(s)`);
  if (names.length === 1) return;
  const judged = entries.find((e) => e.type === 'CANDIDATES_JUDGED')?.data.candidates ?? [];
  const failed = names.filter((n) => !judged.some((c) => c.agent === n && c.testsPassed));
  if (failed.length > 0) throw new Error(`best-of bench: candidate(s) ${failed.join(', ')} did not pass the tests; not a measurement of ${names.length} candidates`);
}

/** Interleaved pairs (one candidate, then three) on one adapter, medians of each. */
async function measure(adapter, pairs, latencyMs, log) {
  const one = [];
  const three = [];
  for (let i = 0; i < pairs; i++) {
    one.push(await once(adapter, ['c1'], latencyMs));
    three.push(await once(adapter, ['c1', 'c2', 'c3'], latencyMs));
  }
  const task1 = median(one.map((x) => x.taskMs));
  const task3 = median(three.map((x) => x.taskMs));
  const ratio = round(task3 / task1, 3);
  const claudeCode = claudeCodeVersion(adapter);
  log(`  dev task, ${adapter.bin} (Claude Code ${claudeCode}, ${adapter.build}): one candidate ${Math.round(task1)} ms, best of 3 ${Math.round(task3)} ms (${ratio}x)`);
  return {
    ratio,
    adapter: adapter.pkg,
    claudeCode: `${claudeCode} (${adapter.build})`,
    oneCandidateTaskMs: Math.round(task1),
    threeCandidatesTaskMs: Math.round(task3),
    oneCandidateRunMs: Math.round(median(one.map((x) => x.runMs))),
    threeCandidatesRunMs: Math.round(median(three.map((x) => x.runMs))),
  };
}

export async function bestOfOverhead({ pairs = 2, latencyMs = 1500, log = () => undefined } = {}) {
  const installed = ADAPTERS.filter((a) => existsSync(a.path));
  if (installed.length === 0) return { best_of_3_wall_ratio: { value: null, unit: 'x', how: `not measured: neither ${ADAPTERS.map((a) => a.pkg).join(' nor ')} is installed`, goal: '<= 1.15', met: null } };
  const results = [];
  for (const adapter of installed) results.push(await measure(adapter, pairs, latencyMs, log));
  const [main, ...others] = results;
  return {
    best_of_3_wall_ratio: {
      value: main.ratio,
      unit: 'x',
      how: `Dev task wall time (TASK_STARTED..TASK_COMPLETED) with three Claude Code ACP candidates against one, through ${main.adapter} (Claude Code ${main.claudeCode}), each turn ${latencyMs} ms of scripted model latency, median of ${pairs} interleaved pairs (bench/best-of.mjs)`,
      goal: '<= 1.15',
      met: main.ratio <= 1.15,
      detail: { ...main, ...(others.length > 0 ? { otherAdapters: others } : {}) },
    },
  };
}
