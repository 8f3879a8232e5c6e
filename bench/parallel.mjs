// parallel_speedup_4: the `parallel` demo with --parallel 4 against --parallel 1, interleaved pairs, with
// a breakdown of where the wall time goes (from the ledger's timestamps) to explain a missed goal.
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { acia, median, onlyLedger, round, scratch } from './util.mjs';

/** Phases of one demo run, in ms, from spawn to exit. */
export function phasesOf(run, entries) {
  const at = (e) => Date.parse(e.ts);
  const first = (pred) => entries.find(pred);
  const last = (pred) => [...entries].reverse().find(pred);
  const started = at(first((e) => e.type === 'RUN_STARTED'));
  const planned = at(first((e) => e.type === 'PLAN_SELECTED'));
  const qaStart = first((e) => e.type === 'TASK_STARTED' && e.data.taskId === 't5');
  const qaDone = last((e) => e.type === 'TASK_COMPLETED' && e.data.taskId === 't5');
  const completed = at(first((e) => e.type === 'RUN_COMPLETED'));
  const devStart = at(first((e) => e.type === 'TASK_STARTED'));
  let runTestsMs = 0;
  let mergeMs = 0;
  let taskStartMs = 0;
  for (const task of ['t1', 't2', 't3', 't4']) {
    const mine = entries.filter((e) => e.data?.taskId === task);
    const started1 = mine.find((e) => e.type === 'TASK_STARTED');
    const firstCall = mine.find((e) => e.type === 'LLM_CALL');
    const lastCall = [...mine].reverse().find((e) => e.type === 'LLM_CALL');
    const done = mine.find((e) => e.type === 'TASK_COMPLETED');
    // Worktree creation and agent set-up: from TASK_STARTED to the first call's request.
    taskStartMs += at(firstCall) - firstCall.data.durationMs - at(started1);
    // Checkpoint commit and merge into the run branch.
    mergeMs += at(done) - at(lastCall);
    runTestsMs += mine.filter((e) => e.type === 'TOOL_RESULT' && e.data.name === 'run_tests').reduce((s, e) => s + e.data.durationMs, 0);
  }
  return {
    wallMs: run.ms,
    startupMs: started - run.startEpoch,
    pmMs: planned - started,
    devPhaseMs: at(qaStart) - devStart,
    scheduleMs: devStart - planned,
    qaMs: at(qaDone) - at(qaStart),
    finishMs: completed - at(qaDone),
    exitMs: run.endEpoch - completed,
    devRunTestsMsSum: runTestsMs,
    devTaskStartMsSum: taskStartMs,
    devMergeMsSum: mergeMs,
  };
}

async function demoRun(parallel, root, i) {
  const dir = join(root, `p${parallel}-${i}`);
  const run = await acia(['demo', '--scenario', 'parallel', '--parallel', String(parallel), '--quiet', '--dir', dir]);
  const phases = phasesOf(run, onlyLedger(dir));
  rmSync(dir, { recursive: true, force: true });
  return phases;
}

export async function parallelSpeedup({ pairs = 3, log = () => {} } = {}) {
  const root = scratch('parallel');
  const p4 = [];
  const p1 = [];
  const ratios = [];
  try {
    for (let i = 0; i < pairs; i++) {
      // Alternate which goes first so drift on the shared machine does not favour one side.
      const order = i % 2 === 0 ? [4, 1] : [1, 4];
      const got = {};
      for (const p of order) got[p] = await demoRun(p, root, i);
      p4.push(got[4]);
      p1.push(got[1]);
      ratios.push(got[1].wallMs / got[4].wallMs);
      log(`  pair ${i + 1}: --parallel 1 ${round(got[1].wallMs / 1000)} s, --parallel 4 ${round(got[4].wallMs / 1000)} s`);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const med = (runs) => Object.fromEntries(Object.keys(runs[0]).map((k) => [k, Math.round(median(runs.map((r) => r[k])))]));
  const m1 = med(p1);
  const m4 = med(p4);
  const speedup = median(ratios);
  // What the ratio would be if the dev phase scaled perfectly by 4 and nothing else changed.
  const perfectDev = m1.wallMs / (m1.wallMs - m1.devPhaseMs + m1.devPhaseMs / 4);
  const fixed = m4.wallMs - m4.devPhaseMs;
  return {
    parallel_speedup_4: {
      value: round(speedup),
      unit: 'x',
      how: `acia demo --scenario parallel --quiet, fresh --dir each; wall time of --parallel 1 over --parallel 4, median of ${pairs} interleaved pairs`,
      goal: '>= 3.2',
      met: speedup >= 3.2,
      detail: {
        medianPhasesMs: { parallel1: m1, parallel4: m4 },
        ratios: ratios.map((r) => round(r)),
        ceilingIfDevPhaseScaledPerfectly: round(perfectDev),
        fixedCostMsAtParallel4: fixed,
        devPhaseSpeedup: round(m1.devPhaseMs / m4.devPhaseMs),
      },
    },
  };
}
