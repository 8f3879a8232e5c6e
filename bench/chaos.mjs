// The chaos bench: seeded runs of the demo scenarios that end `succeeded` unperturbed, each with the
// chaos model (invalid tool input, missing paths, absent edit anchors, text instead of a tool call,
// replies cut at max_tokens, repeated calls, premature "done"), run in-process through the library.
// Reports the share that still ends `succeeded` (goal >= 90%) and the runs that end `succeeded` while
// the run branch's tests fail (goal 0). Usage: node bench/chaos.mjs [--runs 200] [--rate 0.15]
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, SCENARIOS, scratch } from './util.mjs';

const dist = (p) => import(pathToFileURL(join(ROOT, 'dist', p)).href);

export async function chaosFigures({ runs = 200, rate = 0.15, log = () => undefined } = {}) {
  const { runChaosTrial, summarizeChaos, readScenario } = await dist('eval/chaos-trials.js');
  const scenarios = ['happy', 'fix-loop', 'parallel', 'plan-b'].filter((s) => readScenario(join(SCENARIOS, s)).expect.reason === 'succeeded');
  const work = scratch('chaos');
  const trials = [];
  const t0 = Date.now();
  try {
    for (let i = 0; i < runs; i++) {
      const scenario = scenarios[i % scenarios.length];
      const seed = Math.floor(i / scenarios.length) + 1;
      const trial = await runChaosTrial({
        scenarioDir: join(SCENARIOS, scenario),
        seed,
        rate,
        workDir: join(work, `t${i}`),
      });
      rmSync(join(work, `t${i}`), { recursive: true, force: true });
      trials.push(trial);
      if (trial.reason !== 'succeeded' || trial.branchTestsPass === false) log(`  ${scenario} seed ${seed}: ${trial.reason} (${trial.injections.map((x) => x.kind).join(', ')}): ${trial.message.slice(0, 120)}`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const s = summarizeChaos(trials);
  log(`  ${s.runs} runs, ${s.injections} perturbations, succeeded ${s.succeeded} (${s.succeededShare}), untruthful ${s.untruthful}, ${Math.round((Date.now() - t0) / 1000)} s`);
  return {
    chaos_succeeded_share: {
      value: s.succeededShare,
      unit: 'share of runs',
      how: `${s.runs} in-process runs of ${scenarios.join(', ')} with --model chaos:<script>,seed=1..${Math.ceil(runs / scenarios.length)},rate=${rate} (bench/chaos.mjs); ${s.injections} perturbations`,
      goal: '>= 0.9',
      met: s.succeededShare >= 0.9,
      detail: { byReason: s.byReason, byKind: s.byKind, succeededWithWorkSkipped: s.succeededWithWorkSkipped },
    },
    chaos_untruthful_successes: {
      value: s.untruthful,
      unit: 'runs',
      how: 'runs that ended succeeded while the run branch fails its test command (run again in a fresh worktree after the run)',
      goal: '0',
      met: s.untruthful === 0,
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const opt = (name, d) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : d);
  const figures = await chaosFigures({ runs: opt('--runs', 200), rate: opt('--rate', 0.15), log: (m) => process.stderr.write(`${m}\n`) });
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
}
