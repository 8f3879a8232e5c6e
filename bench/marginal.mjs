// marginal_ms_per_turn and git_processes_per_dev_attempt: a 20-turn and a 200-turn zero-latency
// scripted run (sandbox off, parallel 1), interleaved. Start-up, planning, QA and the run's own git work
// are the same in both, so the difference divided by the 180 extra turns is what one more model turn
// costs the orchestrator (tool time taken out); the 6 extra dev tasks give the git processes per attempt.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { acia, ledgerTimes, median, onlyLedger, round, scratch } from './util.mjs';
import { longScript } from './long-script.mjs';
import { gitShim, runArgs, sampleRepo } from './orchestrator.mjs';

const SHORT = { devTasks: 1, readsPerTask: 15, extraReads: 0 }; // 1 + 17 + 2 = 20 turns
const LONG = {}; // the 200-turn run: 7 dev tasks

async function timedRun(root, name, script, env) {
  const repo = sampleRepo(join(root, name));
  const run = await acia(runArgs(repo, script), env ? { env } : {});
  const t = ledgerTimes(onlyLedger(repo));
  rmSync(repo, { recursive: true, force: true });
  return { wallMs: run.ms, toolMs: t.toolMs, turns: t.llmCalls, ownMs: run.ms - t.toolMs };
}

function gitCount(log) {
  return existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter((l) => /^\d+\.\d+ \d+\.\d+ /.test(l)).length : 0;
}

export async function marginalTurnCost({ runs = 3, log = () => {} } = {}) {
  const root = scratch('marginal');
  try {
    const short = join(root, 'short.json');
    const long = join(root, 'long.json');
    writeFileSync(short, JSON.stringify(longScript(SHORT)));
    writeFileSync(long, JSON.stringify(longScript(LONG)));
    const s = [];
    const l = [];
    for (let i = 0; i < runs; i++) {
      s.push(await timedRun(root, `s${i}`, short));
      l.push(await timedRun(root, `l${i}`, long));
    }
    const ms = (xs) => median(xs.map((x) => x.ownMs));
    const turns = l[0].turns - s[0].turns;
    const value = (ms(l) - ms(s)) / turns;
    // Git processes: the same two runs once more with a logging `git` first on PATH.
    const counts = {};
    for (const [name, script] of [['short', short], ['long', long]]) {
      const shim = gitShim(join(root, `shim-${name}`));
      await timedRun(root, `g-${name}`, script, { ...process.env, PATH: `${shim.bin}:${process.env.PATH}` });
      counts[name] = gitCount(shim.log);
    }
    const extraAttempts = LONG_DEV_TASKS - SHORT.devTasks;
    const perAttempt = (counts.long - counts.short) / extraAttempts;
    log(`  marginal ${round(value, 2)} ms/turn over ${turns} turns; git ${counts.short} vs ${counts.long} processes, ${round(perAttempt, 1)} per dev attempt`);
    return {
      marginal_ms_per_turn: {
        value: round(value, 2),
        unit: 'ms/turn',
        how: `(median (wall - tool time) of a ${l[0].turns}-turn zero-latency scripted run - the same for a ${s[0].turns}-turn run) / ${turns}; acia run --model scripted: --sandbox off --parallel 1, ${runs} interleaved pairs`,
        goal: '<= 3',
        met: value <= 3,
        detail: { shortRuns: s, longRuns: l },
      },
      git_processes_per_dev_attempt: {
        value: round(perAttempt, 1),
        unit: 'processes',
        how: `git processes (a logging git first on PATH) of the 200-turn run (${LONG_DEV_TASKS} dev tasks) minus the 20-turn run (1 dev task), per extra dev task attempt`,
        goal: '<= 6',
        met: perAttempt <= 6,
        detail: { short: counts.short, long: counts.long },
      },
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const LONG_DEV_TASKS = 7;
