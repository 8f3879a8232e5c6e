// The real team in-process: startRun / resumeRun with the real deps `acia run` builds (git worktrees,
// checkpoints, merges, policy, the real test command with --sandbox off), the in-process scripted model,
// and by default an in-memory ledger. What the CLI adds (argument parsing, output, exit codes) has its
// own lean e2e tests; here the team's decisions are checked in about a second a run, with no process
// start-up and no fsync per entry. Each session gets a fresh scripted client, as each `acia` process does.
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PlanSet } from '../../src/core/acm/contracts.js';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { systemClock } from '../../src/core/acm/ids.js';
import { defaultCapabilityMap } from '../../src/core/acm/capabilities.js';
import { validatePlanSet } from '../../src/core/acm/validate-plan.js';
import { loadConfig } from '../../src/core/config/load.js';
import { MemoryLedger } from '../../src/core/ledger/memory-ledger.js';
import { buildDeps } from '../../src/app/build-deps.js';
import { exitCodeForResult } from '../../src/cli/run-action.js';
import { replayCommand } from '../../src/cli/replay-action.js';
import { noHuman, type TeamDeps } from '../../src/team/deps.js';
import type { PolicyEngine } from '../../src/core/policy/policy.js';
import { resumeRun, startRun, type RunResult, type StartOptions } from '../../src/team/team.js';
import { editedScript } from '../e2e/cli-helpers.js';
import { git, ledgerOf, tempDir } from '../e2e/helpers.js';

export const SCENARIOS = join(import.meta.dirname, '..', '..', 'workspace', 'scenarios');
export const TEST_CMD = 'node run-tests.js';

let template: string | null = null;

/** The demos' sample repo committed once per worker; each rig copies it (.git included) instead of git init + commit. */
function baseTemplate(): string {
  if (template !== null && existsSync(template)) return template;
  const repo = join(tempDir('rig-template'), 'repo');
  cpSync(join(SCENARIOS, '_base'), repo, { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'base');
  template = repo;
  return repo;
}

export interface Session {
  /** Script turns (docs/scripted-model.md), or a script file's path. */
  script: unknown[] | string;
  /** Config flags for this session, over the rig's: { parallel, maxIterations, testCommand, budget, ... }. */
  flags?: Record<string, unknown>;
  /** Interrupts the session (as Ctrl-C does: stop after the current step) once this entry is recorded. */
  abortWhen?: (entry: LedgerEntry) => boolean;
}

export interface Outcome {
  result: RunResult;
  exitCode: number;
  entries: readonly LedgerEntry[];
  warnings: string[];
}

export interface TeamRig {
  repo: string;
  dir: string;
  start(opts: Omit<StartOptions, 'dir'>, session: Session): Promise<Outcome>;
  resume(runId: string, answer: string | undefined, session: Session): Promise<Outcome>;
  /** The run's entries as recorded so far. */
  entries(runId: string): readonly LedgerEntry[];
}

export interface RigOptions {
  /** Written to .acia/config.json after the base commit, as a user would. */
  config?: Record<string, unknown>;
  /**
   * 'memory' (default): entries live in the test process. 'file': the real file ledger, anchors, bundle and
   * wiki, for tests that replay or verify what is on disk.
   */
  ledger?: 'memory' | 'file';
  /** A policy decision point in place of the default one (the PDP is a seam: TeamDeps.governance.policy). */
  policy?: PolicyEngine;
  /** Changes each session's deps before it starts (a store that fails, a seam to observe). */
  tweak?: (deps: TeamDeps) => void;
}

export function teamRig(opts: RigOptions = {}): TeamRig {
  const dir = tempDir('rig');
  const repo = join(dir, 'repo');
  cpSync(baseTemplate(), repo, { recursive: true });
  if (opts.config) {
    mkdirSync(join(repo, '.acia'), { recursive: true });
    writeFileSync(join(repo, '.acia', 'config.json'), JSON.stringify(opts.config));
  }
  const ledgers = new Map<string, MemoryLedger>();
  let scripts = 0;

  async function depsFor(session: Session, warnings: string[]): Promise<TeamDeps> {
    let file = session.script;
    if (typeof file !== 'string') {
      file = join(dir, `script-${++scripts}.json`);
      writeFileSync(file, JSON.stringify({ version: 1, turns: session.script }));
    }
    const { config } = loadConfig({ repo, env: {}, userFile: null, flags: { model: `scripted:${file}`, sandbox: 'off', testCommand: TEST_CMD, ...session.flags } });
    const deps = await buildDeps({ repo, config, env: process.env, escalator: noHuman, warn: (m) => warnings.push(m) });
    const quick: TeamDeps = {
      ...deps,
      runtime: { ...deps.runtime, sleep: () => Promise.resolve() },
      ...(opts.policy ? { governance: { ...deps.governance, policy: opts.policy } } : {}),
    };
    const abortWhen = session.abortWhen;
    if (abortWhen) {
      const interrupt = new AbortController();
      quick.runtime.signal = interrupt.signal;
      quick.runtime.onEvent = (ev) => {
        if (ev.kind === 'entry' && abortWhen(ev.entry)) interrupt.abort();
      };
    }
    opts.tweak?.(quick);
    if (opts.ledger === 'file') return quick;
    // No file ledger: nothing on disk to anchor, bundle or render a wiki from.
    const { anchor: _anchor, writeBundle: _bundle, ...rest } = quick.store;
    return {
      ...quick,
      store: {
        ...rest,
        renderWiki: () => Promise.resolve(),
        openLedger: (runDir, runId, o) => {
          let ledger = ledgers.get(runId);
          if (!ledger) {
            if (!o.create) return Promise.reject(new Error(`no ledger for run ${runId} in this rig`));
            ledger = new MemoryLedger(runId, systemClock, runDir);
            ledgers.set(runId, ledger);
          }
          return Promise.resolve(ledger);
        },
      },
    };
  }

  const entriesOf = (runId: string): readonly LedgerEntry[] => (opts.ledger === 'file' ? ledgerOf(repo, runId) : (ledgers.get(runId)?.entries() ?? []));
  const outcome = (result: RunResult, warnings: string[]): Outcome => ({ result, exitCode: exitCodeForResult(result), entries: [...entriesOf(result.runId)], warnings });

  return {
    repo,
    dir,
    async start(o, session) {
      const warnings: string[] = [];
      return outcome(await startRun(await depsFor(session, warnings), { dir: repo, ...o }), warnings);
    },
    async resume(runId, answer, session) {
      const warnings: string[] = [];
      return outcome(await resumeRun(await depsFor(session, warnings), { dir: repo, runId, ...(answer === undefined ? {} : { answer }) }), warnings);
    },
    entries: (runId) => [...entriesOf(runId)],
  };
}

type TaskSpec = { id: string; capability: string; input?: Record<string, unknown>; verification?: string[]; retry?: Record<string, unknown>; idemKey?: string; policyInput?: Record<string, unknown>; compensation?: Record<string, unknown> };

/** A plan set of one hand-written plan, chosen by a human, checked as `acia exec` checks a saved file. */
export function savedPlanSet(tasks: TaskSpec[], edges: Record<string, unknown>[], contextRef = `sha256:${'0'.repeat(64)}`): PlanSet {
  const plan = {
    id: 'plan-A',
    goalId: 'goal-saved',
    contextRef,
    capabilityMapVersion: 'acia-caps@1',
    tasks: tasks.map((t) => ({ input: t.capability === 'qa.verify' ? {} : { instructions: `do ${t.id}` }, verification: [], ...t })),
    edges,
    joins: [],
    rationale: 'saved for the test',
  };
  const checked = validatePlanSet({ goalId: 'goal-saved', contextRef, plans: [plan], selection: { method: 'human', chosenPlanId: 'plan-A', rationale: 'test' } }, defaultCapabilityMap);
  if (!checked.ok || !checked.planSet) throw new Error(`test plan is invalid: ${JSON.stringify(checked.errors)}`);
  return checked.planSet;
}

/** A Dev agent that writes one file and returns. */
export const writes = (caller: string, path: string, content: string) => [
  { caller, toolCalls: [{ name: 'write_file', input: { path, content } }] },
  { caller, toolCalls: [{ name: 'return_result', input: { summary: `wrote ${path}` } }] },
];

/** A QA agent that runs the tests and claims a pass (the verdict comes from the exit code). */
export const runsTests = (caller: string) => [
  { caller, toolCalls: [{ name: 'run_tests', input: {} }] },
  { caller, toolCalls: [{ name: 'return_result', input: { passed: true, summary: 'ran the tests' } }] },
];

export const ofType = (entries: readonly LedgerEntry[], type: string) => entries.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);
export const lastCompleted = (entries: readonly LedgerEntry[]) => entries.filter((e) => e.type === 'RUN_COMPLETED').at(-1)!.data as { reason: string; message: string };

/**
 * A demo scenario's goal, settings and script. Latencies are set to 0 (waiting is not what the tests
 * check), or to `agentLatencyMs` on every turn but the PM's, for a test that needs tasks still running.
 */
export function scenario(name: string, dir: string, agentLatencyMs = 0): { goal: string; session: Session; expect: { exitCode: number; reason: string } } {
  const meta = JSON.parse(readFileSync(join(SCENARIOS, name, 'scenario.json'), 'utf8')) as {
    goal: string;
    settings: { parallel: number; maxIterations: number; maxTokens?: number; testCommand?: string };
    expect: { exitCode: number; reason: string };
  };
  const file = editedScript(
    name,
    (turns) => {
      for (const t of turns) t.latencyMs = t.caller === 'pm' ? 0 : agentLatencyMs;
    },
    join(dir, `${name}-script-${agentLatencyMs}.json`),
  );
  const s = meta.settings;
  const flags = {
    parallel: s.parallel,
    maxIterations: s.maxIterations,
    ...(s.testCommand === undefined ? {} : { testCommand: s.testCommand }),
    ...(s.maxTokens === undefined ? {} : { budget: { maxTokens: s.maxTokens } }),
  };
  return { goal: meta.goal, session: { script: file, flags }, expect: meta.expect };
}

/** `acia replay` in-process: true when the recorded run replays to the same decisions. */
export async function replaysIdentically(repo: string, runId: string): Promise<boolean> {
  return (await replayCommand(repo, runId, false)) === 0;
}
