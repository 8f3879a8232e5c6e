// Seeded chaos trials: a demo scenario run in-process with the chaos model, then the run branch's
// tests run again outside the team. The measure is how often the team still succeeds, and that it
// never says `succeeded` while the branch's tests fail.
import { cpSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '../core/acm/ids.js';
import { errorMessage } from '../core/errors.js';
import type { TerminalReason } from '../core/ledger/run-vocabulary.js';
import { ChaosClient, type ChaosKind, type Injection } from '../core/llm/chaos-client.js';
import { loadScript } from '../core/llm/script.js';
import { ScriptedClient } from '../core/llm/scripted-client.js';
import { createDeps } from '../app/create-deps.js';
import type { LlmClient } from '../core/llm/types.js';
import { loadConfig } from '../core/config/load.js';
import { noHuman, type TeamDeps } from '../team/deps.js';
import { Git } from '../team/git.js';
import { startRun } from '../team/team.js';
import { MATERIALISE_ENV } from './checkout.js';

export interface ScenarioSettings {
  goal: string;
  repo: string;
  settings: { parallel: number; maxIterations: number; testCommand?: string };
  expect: { reason: string };
}

export interface ChaosTrialOptions {
  /** A scenario directory: scenario.json, script.json; its `repo` is relative to it. */
  scenarioDir: string;
  seed: number;
  rate: number;
  /** Scratch directory for this trial (removed first). */
  workDir: string;
  /**
   * The run's deps on the trial's repository, with `harness`'s model (the chaos client) and sleep. Default:
   * what `acia run` builds for the scenario offline (`scenarioDeps`).
   */
  makeDeps?: (repo: string, settings: ScenarioRunSettings, harness: Harness) => Promise<TeamDeps>;
}

interface ScenarioRunSettings {
  testCommand: string;
  parallel: number;
  maxIterations: number;
}

/** The trial's model and sleep, which replace the configured ones. */
interface Harness {
  client: LlmClient;
  sleep: (ms: number) => Promise<void>;
}

/** The deps `acia run` builds for a demo scenario (no sandbox, no human to ask), with the harness's model. */
function scenarioDeps(scenarioDir: string): (repo: string, s: ScenarioRunSettings, harness: Harness) => Promise<TeamDeps> {
  return (repo, s, harness) =>
    createDeps({
      kind: 'eval',
      ...harness,
      repo,
      config: loadConfig({ repo: null, env: {}, userFile: null, flags: { model: `scripted:${join(scenarioDir, 'script.json')}`, sandbox: 'off', testCommand: s.testCommand, parallel: s.parallel, maxIterations: s.maxIterations } }).config,
      env: process.env,
      escalator: noHuman,
      warn: () => undefined,
    });
}

export interface ChaosTrial {
  scenario: string;
  seed: number;
  reason: TerminalReason | 'crashed';
  message: string;
  injections: Injection[];
  /** The run branch's tests, run after the run in a fresh worktree; null when there was no branch. */
  branchTestsPass: boolean | null;
  /**
   * Dev turns of the script never served: work a premature "done" skipped and no later agent did. (A QA
   * agent's skipped turns do not count: the team runs the tests itself when QA did not.)
   */
  unconsumedDevTurns: number;
}

export function readScenario(dir: string): ScenarioSettings {
  return JSON.parse(readFileSync(join(dir, 'scenario.json'), 'utf8')) as ScenarioSettings;
}

export async function runChaosTrial(o: ChaosTrialOptions): Promise<ChaosTrial> {
  const scenario = readScenario(o.scenarioDir);
  const name = o.scenarioDir.split('/').filter(Boolean).at(-1) ?? o.scenarioDir;
  const testCommand = scenario.settings.testCommand ?? 'npm test';
  rmSync(o.workDir, { recursive: true, force: true });
  const repo = join(o.workDir, 'repo');
  mkdirSync(repo, { recursive: true });
  cpSync(join(o.scenarioDir, scenario.repo), repo, { recursive: true });
  const git = new Git(systemClock);
  await git.run(repo, ['init', '-q', '-b', 'main']);
  await git.run(repo, ['add', '-A']);
  await git.run(repo, ['commit', '-q', '--no-verify', '-m', 'sample repo'], { env: MATERIALISE_ENV });

  const script = await loadScript(join(o.scenarioDir, 'script.json'));
  const noSleep = () => Promise.resolve();
  const scripted = new ScriptedClient(script, { sleep: noSleep });
  const chaos = new ChaosClient(scripted, { seed: o.seed, rate: o.rate }, { sleep: noSleep });
  const deps = await (o.makeDeps ?? scenarioDeps(o.scenarioDir))(repo, { testCommand, parallel: scenario.settings.parallel, maxIterations: scenario.settings.maxIterations }, { client: chaos, sleep: noSleep });
  let reason: ChaosTrial['reason'];
  let message: string;
  let branch: string | null = null;
  try {
    const r = await startRun(deps, { dir: repo, goal: scenario.goal });
    reason = r.reason;
    message = r.message;
    branch = r.runBranch;
  } catch (e) {
    reason = 'crashed';
    message = errorMessage(e);
  }
  let branchTestsPass: boolean | null = null;
  if (branch !== null && (await git.branchExists(repo, branch))) {
    const tree = join(o.workDir, 'check');
    await git.run(repo, ['worktree', 'add', '-q', '--detach', '--force', tree, branch]);
    const r = await deps.tools.runnerFor(tree).run(testCommand, { cwd: tree, timeoutMs: 120_000 });
    branchTestsPass = r.exitCode === 0;
    await git.run(repo, ['worktree', 'remove', '--force', tree], { allowFail: true });
  }
  return { scenario: name, seed: o.seed, reason, message, injections: chaos.injections, branchTestsPass, unconsumedDevTurns: scripted.engine.unconsumed().filter((t) => t.caller.startsWith('dev:')).length };
}

export interface ChaosSummary {
  runs: number;
  succeeded: number;
  succeededShare: number;
  /** Runs that ended `succeeded` while the run branch's tests fail: must be 0. */
  untruthful: number;
  /** Succeeded runs with scripted Dev work left undone: a premature "done" the tests did not catch. */
  succeededWithWorkSkipped: number;
  byReason: Record<string, number>;
  injections: number;
  byKind: Partial<Record<ChaosKind, number>>;
}

export function summarizeChaos(trials: readonly ChaosTrial[]): ChaosSummary {
  const byReason: Record<string, number> = {};
  const byKind: Partial<Record<ChaosKind, number>> = {};
  for (const t of trials) {
    byReason[t.reason] = (byReason[t.reason] ?? 0) + 1;
    for (const i of t.injections) byKind[i.kind] = (byKind[i.kind] ?? 0) + 1;
  }
  const succeeded = trials.filter((t) => t.reason === 'succeeded');
  return {
    runs: trials.length,
    succeeded: succeeded.length,
    succeededShare: trials.length === 0 ? 0 : Math.round((succeeded.length / trials.length) * 1000) / 1000,
    untruthful: succeeded.filter((t) => t.branchTestsPass !== true).length,
    succeededWithWorkSkipped: succeeded.filter((t) => t.unconsumedDevTurns > 0).length,
    byReason,
    injections: trials.reduce((n, t) => n + t.injections.length, 0),
    byKind,
  };
}
