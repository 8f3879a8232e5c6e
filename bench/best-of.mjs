// Best-of-3 against one candidate: the same Dev task done by three real Claude Code (ACP) candidates in
// parallel worktrees, against one, with the same scripted model latency per turn. The figure is the
// ratio of the Dev task's wall time (TASK_STARTED to TASK_COMPLETED in the ledger) and of the run's.
import { cpSync, mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { CLI, ROOT, SCENARIOS, median, round, scratch, timedSpawn } from './util.mjs';

const ADAPTER = join(ROOT, 'node_modules', '.bin', 'claude-code-acp');
const GOAL = 'Add a titleCase(text) helper that capitalises every word, with a test';

function script(names, latencyMs) {
  const happy = JSON.parse(readFileSync(join(SCENARIOS, 'happy', 'script.json'), 'utf8'));
  const writes = happy.turns.flatMap((t) => (t.caller === 'dev:t1' ? (t.toolCalls ?? []).filter((c) => c.name === 'write_file') : []));
  const turns = [...happy.turns.filter((t) => t.caller === 'pm').map((t) => ({ ...t, latencyMs: 0 }))];
  for (const name of names) {
    for (const w of writes) turns.push({ caller: `acp:${name}:claude-sonnet*`, text: '', latencyMs, toolCalls: [{ name: 'Write', input: { file_path: w.input.path, content: w.input.content } }] });
    turns.push({ caller: `acp:${name}:claude-sonnet*`, text: 'done', latencyMs });
    for (let i = 0; i < 8; i++) turns.push({ caller: `acp:${name}:claude-haiku*`, text: 'ok', latencyMs: 0 });
  }
  turns.push(...happy.turns.filter((t) => t.caller.startsWith('qa:')).map((t) => ({ ...t, latencyMs: 0 })));
  return { version: 1, model: happy.model, turns };
}

async function once(names, latencyMs) {
  const { startFakeAnthropicServer } = await import(join(ROOT, 'dist', 'core', 'llm', 'fake-server.js'));
  const server = await startFakeAnthropicServer({ script: script(names, latencyMs) });
  const dir = scratch('best-of');
  const repo = join(dir, 'repo');
  cpSync(join(SCENARIOS, '_base'), repo, { recursive: true });
  for (const args of [['init', '-q', '-b', 'main'], ['add', '-A'], ['-c', 'user.name=b', '-c', 'user.email=b@example.com', 'commit', '-q', '-m', 'initial']]) execFileSync('git', args, { cwd: repo });
  mkdirSync(join(dir, 'xdg', 'acia'), { recursive: true });
  writeFileSync(join(dir, 'xdg', 'acia', 'config.json'), JSON.stringify({ devAgents: Object.fromEntries(names.map((n) => [n, ADAPTER])), testCommand: 'node run-tests.js' }));
  try {
    const r = await timedSpawn(process.execPath, [CLI, 'run', GOAL, '--repo', repo, '--dev-agent', names.join(','), '--model', 'anthropic:claude-sonnet-5-5', '--quiet'], {
      env: { PATH: process.env.PATH, HOME: join(dir, 'home'), LANG: 'C.UTF-8', ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'bench', XDG_CONFIG_HOME: join(dir, 'xdg') },
    });
    if (r.code !== 0) throw new Error(`best-of bench run failed (exit ${r.code}): ${r.stderr.slice(-500)}`);
    const runs = join(repo, '.acia', 'runs');
    const runId = execFileSync('ls', [runs], { encoding: 'utf8' }).trim();
    const entries = readFileSync(join(runs, runId, 'ledger.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const at = (type) => Date.parse(entries.find((e) => e.type === type && e.data.taskId === 't1').ts);
    return { taskMs: at('TASK_COMPLETED') - at('TASK_STARTED'), runMs: r.ms };
  } finally {
    await server.close();
  }
}

/** Interleaved pairs (one candidate, then three), medians of each. */
export async function bestOfOverhead({ pairs = 2, latencyMs = 1500, log = () => undefined } = {}) {
  if (!existsSync(ADAPTER)) return { best_of_3_wall_ratio: { value: null, unit: 'x', how: 'not measured: @zed-industries/claude-code-acp is not installed', goal: '<= 1.15', met: null } };
  const one = [];
  const three = [];
  for (let i = 0; i < pairs; i++) {
    one.push(await once(['c1'], latencyMs));
    three.push(await once(['c1', 'c2', 'c3'], latencyMs));
  }
  const task1 = median(one.map((x) => x.taskMs));
  const task3 = median(three.map((x) => x.taskMs));
  const ratio = round(task3 / task1, 3);
  log(`  dev task: one candidate ${Math.round(task1)} ms, best of 3 ${Math.round(task3)} ms (${ratio}x)`);
  return {
    best_of_3_wall_ratio: {
      value: ratio,
      unit: 'x',
      how: `Dev task wall time (TASK_STARTED..TASK_COMPLETED) with three Claude Code ACP candidates against one, each turn ${latencyMs} ms of scripted model latency, median of ${pairs} interleaved pairs (bench/best-of.mjs)`,
      goal: '<= 1.15',
      met: ratio <= 1.15,
      detail: { oneCandidateTaskMs: Math.round(task1), threeCandidatesTaskMs: Math.round(task3), oneCandidateRunMs: Math.round(median(one.map((x) => x.runMs))), threeCandidatesRunMs: Math.round(median(three.map((x) => x.runMs))) },
    },
  };
}
