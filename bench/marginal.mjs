// marginal_ms_per_turn, dev_task_overhead_ms and git_processes_per_dev_attempt, from three zero-latency
// scripted runs (sandbox off, parallel 1), interleaved:
//   long    7 dev tasks, 200 turns (28 per task)
//   short   the same 7 dev tasks, 20 turns (a write and a result each, 3 reads more in the first)
//   single  1 dev task, 20 turns (15 reads, a write, a result)
// long and short share the plan, so start-up, planning, QA and every task's worktree and merge are the
// same in both: their difference over the 180 extra turns is what one more model turn costs the
// orchestrator (tool time taken out). short and single share the turn count, so their difference over the
// 6 extra tasks is what one more dev task costs, and gives the git processes per attempt.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { acia, ledgerTimes, median, onlyLedger, round, scratch } from './util.mjs';
import { DEV_TASKS, longScript } from './long-script.mjs';
import { gitShim, runArgs, sampleRepo } from './orchestrator.mjs';

const LONG = {}; // the 200-turn run: 7 dev tasks
const SHORT = { devTasks: DEV_TASKS, readsPerTask: 0, extraReads: 3 }; // 1 + 7 * 2 + 3 + 2 = 20 turns
const SINGLE = { devTasks: 1, readsPerTask: 15, extraReads: 0 }; // 1 + 17 + 2 = 20 turns

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
    const scripts = {};
    const samples = {};
    for (const [name, shape] of [['long', LONG], ['short', SHORT], ['single', SINGLE]]) {
      scripts[name] = join(root, `${name}.json`);
      writeFileSync(scripts[name], JSON.stringify(longScript(shape)));
      samples[name] = [];
    }
    // Interleaved, and the order turned each round, so no kind of run always follows the same one.
    const names = Object.keys(scripts);
    for (let i = 0; i < runs; i++) {
      for (const name of [...names.slice(i % names.length), ...names.slice(0, i % names.length)]) samples[name].push(await timedRun(root, `${name}${i}`, scripts[name]));
    }
    const ms = (name) => median(samples[name].map((x) => x.ownMs));
    const { long: l, short: s, single: one } = samples;
    const turns = l[0].turns - s[0].turns;
    const value = (ms('long') - ms('short')) / turns;
    const extraTasks = DEV_TASKS - SINGLE.devTasks;
    const perTask = (ms('short') - ms('single')) / extraTasks;
    // Git processes: the short and single runs once more with a logging `git` first on PATH.
    const counts = {};
    for (const name of ['short', 'single']) {
      const shim = gitShim(join(root, `shim-${name}`));
      await timedRun(root, `g-${name}`, scripts[name], { ...process.env, PATH: `${shim.bin}:${process.env.PATH}` });
      counts[name] = gitCount(shim.log);
    }
    const perAttempt = (counts.short - counts.single) / extraTasks;
    log(`  marginal ${round(value, 2)} ms/turn over ${turns} turns; ${round(perTask, 0)} ms per dev task; git ${counts.single} vs ${counts.short} processes, ${round(perAttempt, 1)} per dev attempt`);
    const how = `acia run --model scripted: --sandbox off --parallel 1, ${runs} interleaved rounds`;
    return {
      marginal_ms_per_turn: {
        value: round(value, 2),
        unit: 'ms/turn',
        how: `(median (wall - tool time) of a ${l[0].turns}-turn zero-latency scripted run of ${DEV_TASKS} dev tasks - the same for a ${s[0].turns}-turn run of the same ${DEV_TASKS} tasks) / ${turns}; ${how}`,
        goal: '<= 1.6',
        met: value <= 1.6,
        detail: { shortRuns: s, longRuns: l },
      },
      dev_task_overhead_ms: {
        value: round(perTask, 0),
        unit: 'ms/task',
        how: `(median (wall - tool time) of a ${s[0].turns}-turn run of ${DEV_TASKS} dev tasks - the same for a ${one[0].turns}-turn run of 1 dev task) / ${extraTasks}: worktree, agent start, commit and merge of one more task; ${how}`,
        goal: null,
        met: null,
        detail: { singleRuns: one },
      },
      git_processes_per_dev_attempt: {
        value: round(perAttempt, 1),
        unit: 'processes',
        how: `git processes (a logging git first on PATH) of the ${s[0].turns}-turn run of ${DEV_TASKS} dev tasks minus the ${one[0].turns}-turn run of 1, per extra dev task attempt`,
        goal: '<= 6',
        met: perAttempt <= 6,
        detail: { short: counts.short, single: counts.single },
      },
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
