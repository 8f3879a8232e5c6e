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
import type { RunLedger } from '../../src/core/ledger/types.js';
import { foldRun } from '../../src/core/run/reducer.js';
import { handoutLost } from '../../src/team/handout.js';
import { Recorder } from '../../src/team/recorder.js';
import type { RunContext } from '../../src/team/run-context.js';
import { runDevTask } from '../../src/team/task-dev.js';
import { createDeps } from '../../src/app/create-deps.js';
import { exitCodeForResult } from '../../src/cli/run-action.js';
import { replayCommand } from '../../src/cli/replay-action.js';
import { noHuman, type TeamDeps, type TeamEvent } from '../../src/team/deps.js';
import { noAnchor, noBundle } from '../../src/team/deps-defaults.js';
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
  /**
   * Runs dev task `taskId` as a fleet would, handed out to a worker process of its own (its own scripted
   * client), which dies at its `at`-th append; the task is then handed out again (handoutLost) and runs
   * to its end. The file ledger plays the fleet's database.
   */
  loseHandout?: { taskId: string; at: number };
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
  /**
   * Starts a run (or, given `runId`, resumes one) in a session that dies as a process killed -9 would when
   * it is about to make its `crashAt`-th append: nothing from then on reaches the ledger, the ledger's lock is
   * let go, and the session's work never returns (what was under way when it died may finish its side effect,
   * as it may in a real crash). Needs the file ledger. `crashed` is false when the session ended first.
   */
  crash(o: { goal: string } | { runId: string }, session: Session, crashAt: number): Promise<{ runId: string; crashed: boolean }>;
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
    const abortWhen = session.abortWhen;
    const interrupt = new AbortController();
    const deps = await createDeps({
      kind: 'local',
      repo,
      config,
      env: process.env,
      escalator: noHuman,
      warn: (m) => warnings.push(m),
      // Interrupted as Ctrl-C does, once the entry is recorded.
      ...(abortWhen
        ? {
            signal: interrupt.signal,
            onEvent: (ev: TeamEvent) => {
              if (ev.kind === 'entry' && abortWhen(ev.entry)) interrupt.abort();
            },
          }
        : {}),
    });
    // Task-level retry backoff is not what the rig's tests measure.
    const quick: TeamDeps = {
      ...deps,
      runtime: { ...deps.runtime, sleep: () => Promise.resolve() },
      ...(opts.policy ? { governance: { ...deps.governance, policy: opts.policy } } : {}),
    };
    const lose = session.loseHandout;
    if (lose) {
      let lost = false;
      quick.fleet = {
        ...quick.fleet,
        dispatchTask: async (ctx, taskId) => {
          if (taskId === lose.taskId && !lost) {
            lost = true;
            const { loseHandout: _lost, ...plain } = session;
            const own = await depsFor(plain, warnings);
            let died: () => void = () => undefined;
            const death = new Promise<void>((r) => (died = r));
            const ledger = dyingLedger(ctx.rec.ledger, lose.at, () => died(), false);
            const state = foldRun(ledger.entries());
            const worker: RunContext = { ...ctx, deps: own, state, rec: new Recorder(ledger, state, own.runtime.clock, undefined) };
            await Promise.race([death, runDevTask(worker, taskId)]);
            await handoutLost(ctx, taskId, 'its worker w1 stopped answering');
          }
          return runDevTask(ctx, taskId);
        },
      };
    }
    opts.tweak?.(quick);
    if (opts.ledger === 'file') return quick;
    // No file ledger: nothing on disk to anchor, bundle or render a wiki from.
    return {
      ...quick,
      store: {
        ...quick.store,
        anchor: noAnchor,
        writeBundle: noBundle,
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
    async crash(o, session, crashAt) {
      if (opts.ledger !== 'file') throw new Error('crash() needs teamRig({ ledger: "file" })');
      const deps = await depsFor(session, []);
      let died: (runId: string) => void = () => undefined;
      const death = new Promise<string>((r) => (died = r));
      const dying: TeamDeps = { ...deps, store: { ...deps.store, openLedger: async (runDir, runId, o2) => dyingLedger(await deps.store.openLedger(runDir, runId, o2), crashAt, died, true) } };
      const run = 'goal' in o ? startRun(dying, { dir: repo, goal: o.goal }) : resumeRun(dying, { dir: repo, runId: o.runId });
      return Promise.race([death.then((runId) => ({ runId, crashed: true })), run.then((r) => ({ runId: r.runId, crashed: false }))]);
    },
    entries: (runId) => [...entriesOf(runId)],
  };
}

/** A ledger whose process dies at its `crashAt`-th append (see TeamRig.crash); `release`: it held the ledger alone. */
function dyingLedger(inner: RunLedger, crashAt: number, died: (runId: string) => void, release: boolean): RunLedger {
  let appends = 0;
  let dead = false;
  const never = <T>(): Promise<T> => new Promise<T>(() => undefined);
  const die = (): void => {
    if (dead) return;
    dead = true;
    // Whatever was appended before is on disk, as after a real crash; the lock is free for the next process.
    if (release) void inner.close().then(() => died(inner.runId));
    else died(inner.runId);
  };
  return {
    runId: inner.runId,
    dir: inner.dir,
    entries: () => inner.entries(),
    head: () => inner.head(),
    append: (input) => {
      if (dead || ++appends >= crashAt) {
        die();
        return never();
      }
      return inner.append(input);
    },
    putBlob: (content) => (dead ? never() : inner.putBlob(content)),
    getBlob: (ref) => inner.getBlob(ref),
    close: () => (dead || !release ? Promise.resolve() : inner.close()),
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
