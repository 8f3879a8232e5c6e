// orchestrator_overhead_ms_per_turn and peak_rss_mb_200_turns: zero-latency scripted runs through the
// built CLI with the sandbox off, so what is left after tool time is ACIA's own cost per model turn.
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { CLI, SCENARIOS, acia, ledgerTimes, median, onlyLedger, round, scratch, scriptWithLatency, timedSpawn } from './util.mjs';
import { longScript } from './long-script.mjs';

export function sampleRepo(dir) {
  mkdirSync(dir, { recursive: true });
  cpSync(join(SCENARIOS, '_base'), dir, { recursive: true });
  const git = (...a) => execFileSync('git', a, { cwd: dir, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('-c', 'user.name=bench', '-c', 'user.email=bench@localhost', 'commit', '-q', '--no-verify', '-m', 'base');
  return dir;
}

export const runArgs = (repo, script) => ['run', 'bench goal', '--repo', repo, '--model', `scripted:${script}`, '--sandbox', 'off', '--quiet', '--parallel', '1', '--max-iterations', '1'];

/** A `git` first on PATH that logs how long each real git took. */
export function gitShim(dir) {
  const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  const log = join(dir, 'git.log');
  const shim = join(dir, 'bin', 'git');
  mkdirSync(join(dir, 'bin'), { recursive: true });
  writeFileSync(shim, `#!/bin/bash\nt0=$EPOCHREALTIME\n${real} "$@"\nrc=$?\nt1=$EPOCHREALTIME\necho "$t0 $t1 \${*//$'\\n'/ }" >> ${log}\nexit $rc\n`);
  chmodSync(shim, 0o755);
  return { bin: join(dir, 'bin'), log };
}

/** `git -c k=v -C dir worktree add ...` -> `worktree`. */
function subcommand(args) {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-c' || args[i] === '-C') i++;
    else if (!args[i].startsWith('-')) return args[i];
  }
  return '?';
}

function perTurn(run, entries) {
  const t = ledgerTimes(entries);
  return { wallMs: run.ms, toolMs: t.toolMs, turns: t.llmCalls, entries: t.entries, startupMs: t.startedAt - run.startEpoch, exitMs: run.endEpoch - t.completedAt, perTurnMs: (run.ms - t.toolMs) / t.llmCalls };
}

export async function orchestratorOverhead({ runs = 3, fsyncMs = null, log = () => {} } = {}) {
  const root = scratch('orch');
  try {
    const script = join(root, 'parallel-0ms.json');
    writeFileSync(script, JSON.stringify(scriptWithLatency('parallel', 0)));
    const samples = [];
    for (let i = 0; i < runs; i++) {
      const repo = sampleRepo(join(root, `r${i}`));
      const run = await acia(runArgs(repo, script));
      samples.push(perTurn(run, onlyLedger(repo)));
      rmSync(repo, { recursive: true, force: true });
    }
    // One more run with git timed through a PATH shim (the shim's own bash start is not counted).
    const shim = gitShim(root);
    const repo = sampleRepo(join(root, 'shim'));
    await acia(runArgs(repo, script), { env: { ...process.env, PATH: `${shim.bin}:${process.env.PATH}` } });
    const calls = existsSync(shim.log) ? readFileSync(shim.log, 'utf8').trim().split('\n').filter((l) => /^\d+\.\d+ \d+\.\d+ /.test(l)).map((l) => l.split(' ')) : [];
    const gitMs = calls.reduce((s, [a, b]) => s + (Number(b) - Number(a)) * 1000, 0);
    const byCmd = {};
    for (const [, , ...args] of calls) {
      const cmd = subcommand(args);
      byCmd[cmd] = (byCmd[cmd] ?? 0) + 1;
    }
    const bare = [];
    for (let i = 0; i < 3; i++) bare.push(await timedSpawn(process.execPath, ['-e', '0']));
    const m = Object.fromEntries(Object.keys(samples[0]).map((k) => [k, round(median(samples.map((s) => s[k])), 1)]));
    const value = m.perTurnMs;
    log(`  ${m.turns} turns, wall ${m.wallMs} ms, tools ${m.toolMs} ms, git ${Math.round(gitMs)} ms in ${calls.length} calls`);
    return {
      orchestrator_overhead_ms_per_turn: {
        value: round(value, 1),
        unit: 'ms/turn',
        how: `parallel scenario script with latencyMs 0, acia run --model scripted: --sandbox off --parallel 1 (process wall time - sum of TOOL_RESULT durationMs) / LLM_CALL count, median of ${runs}`,
        goal: '<= 3',
        met: value <= 3,
        detail: {
          median: m,
          breakdownMsPerTurn: {
            processStartToRunStarted: round(m.startupMs / m.turns, 1),
            runCompletedToExit: round(m.exitMs / m.turns, 1),
            git: round(gitMs / m.turns, 1),
            ledgerFsyncUpperBound: fsyncMs === null ? null : round((fsyncMs * m.entries) / m.turns, 1),
            nodeBareStartMs: round(median(bare.map((b) => b.ms)), 1),
          },
          gitCalls: calls.length,
          gitCallsByCommand: byCmd,
        },
      },
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

export async function peakRss({ log = () => {} } = {}) {
  const root = scratch('rss');
  try {
    const script = join(root, 'long.json');
    writeFileSync(script, JSON.stringify(longScript()));
    const repo = sampleRepo(join(root, 'repo'));
    const out = join(root, 'time.txt');
    const useTime = existsSync('/usr/bin/time');
    const run = useTime
      ? await timedSpawn('/usr/bin/time', ['-f', '%M', '-o', out, process.execPath, CLI, ...runArgs(repo, script)])
      : await timedSpawn(process.execPath, [CLI, ...runArgs(repo, script)]);
    if (run.code !== 0) throw new Error(`200-turn run exited ${run.code}: ${run.stderr.slice(-500)}`);
    const entries = onlyLedger(repo);
    const turns = perTurn(run, entries);
    const kb = useTime ? Number(readFileSync(out, 'utf8').trim().split('\n').at(-1)) : NaN;
    log(`  ${turns.turns} turns in ${round(run.ms / 1000)} s, peak RSS ${round(kb / 1024, 1)} MB`);
    return {
      peak_rss_mb_200_turns: {
        value: useTime ? round(kb / 1024, 1) : null,
        unit: 'MB',
        how: `/usr/bin/time -f %M of acia run with a generated ${turns.turns}-turn scripted run (7 dev tasks of 28-29 turns of read_file/list_dir, then QA), --sandbox off --parallel 1`,
        goal: null,
        met: null,
        detail: { turns: turns.turns, wallMs: Math.round(run.ms), overheadMsPerTurn: round(turns.perTurnMs, 1), ledgerEntries: entries.length },
      },
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
