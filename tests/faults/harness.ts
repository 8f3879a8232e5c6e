// Shared pieces of the fault suites: a tiny sample repo, a one-dev-one-QA script with room for injected
// turns, and the two ways to run it (the built CLI with the in-process scripted model, or the library
// with the fake Anthropic server and the real SDK).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import type { ScriptTurn } from '../../src/core/llm/script.js';
import { acia, ledgerOf, tempDir, type CliResult } from '../e2e/helpers.js';

export const GOAL = 'Add a VERSION file';
export const TEST_COMMAND = 'node -e 0';

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'fault suite',
  GIT_AUTHOR_EMAIL: 'faults@example.invalid',
  GIT_COMMITTER_NAME: 'fault suite',
  GIT_COMMITTER_EMAIL: 'faults@example.invalid',
};

export function sh(cwd: string, cmd: string, ...args: string[]): string {
  return execFileSync(cmd, args, { cwd, encoding: 'utf8', env: GIT_ENV, maxBuffer: 64 * 1024 * 1024 }).trim();
}

/** A small committed node project; `extra` is called before the first commit to add more content. */
export function sampleRepo(prefix: string, extra?: (dir: string) => void, opts: { commit?: boolean } = {}): string {
  const dir = join(tempDir(prefix), 'repo');
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'sample', version: '1.0.0', type: 'module', scripts: { test: TEST_COMMAND } }, null, 2)}\n`);
  writeFileSync(join(dir, 'src', 'index.js'), 'export const answer = 42;\n');
  sh(dir, 'git', 'init', '-q', '-b', 'main');
  extra?.(dir);
  if (opts.commit ?? true) {
    sh(dir, 'git', 'add', '-A');
    sh(dir, 'git', 'commit', '-q', '--no-verify', '-m', 'sample');
  }
  return dir;
}

export const PLAN_TURN: ScriptTurn = {
  caller: 'pm',
  toolCalls: [
    {
      name: 'return_result',
      input: {
        plans: [
          {
            id: 'plan-A',
            rationale: 'One dev task writes the file; QA runs the tests.',
            tasks: [
              { id: 't1', capability: 'dev.implement', title: 'Write VERSION', input: { instructions: 'Write VERSION containing 1.0.1.', files: ['VERSION'] } },
              { id: 't2', capability: 'qa.verify', title: 'Run the tests', input: { instructions: 'Run the test suite.' } },
            ],
            edges: [{ from: 't1', to: 't2' }],
          },
        ],
        chosenPlanId: 'plan-A',
        selectionRationale: 'the only plan',
      },
    },
  ],
};

export const WRITE_TURN: ScriptTurn = { caller: 'dev:t1', toolCalls: [{ name: 'write_file', input: { path: 'VERSION', content: '1.0.1\n' } }] };
export const RETURN_TURN: ScriptTurn = { caller: 'dev:t1', toolCalls: [{ name: 'return_result', input: { summary: 'wrote VERSION' } }] };
const QA_TURNS: ScriptTurn[] = [
  { caller: 'qa:t2', toolCalls: [{ name: 'run_tests', input: {} }] },
  { caller: 'qa:t2', toolCalls: [{ name: 'return_result', input: { passed: true, summary: 'tests pass' } }] },
];

export interface Injected {
  /** Turns served to the PM before its plan. */
  pm?: ScriptTurn[];
  /** Turns served to dev:t1 before it writes the file. */
  dev?: ScriptTurn[];
  /** Turns served to dev:t1 after the write, before it returns. */
  devAfterWrite?: ScriptTurn[];
  /** Replaces the dev turns entirely. */
  devTurns?: ScriptTurn[];
}

export function faultScript(inject: Injected = {}) {
  const dev = inject.devTurns ?? [...(inject.dev ?? []), WRITE_TURN, ...(inject.devAfterWrite ?? []), RETURN_TURN];
  return { version: 1 as const, model: 'claude-sonnet-5-5', turns: [...(inject.pm ?? []), PLAN_TURN, ...dev, ...QA_TURNS] };
}

export interface CliRun extends CliResult {
  runIds: string[];
}

/** `acia run` through the built CLI with the in-process scripted model and no sandbox. */
export function runCli(repo: string, script: object, extra: string[] = [], opts: { env?: Record<string, string> } = {}): CliRun {
  const file = join(tempDir('script'), 'script.json');
  writeFileSync(file, JSON.stringify(script));
  const r = acia(['run', GOAL, '--repo', repo, '--model', `scripted:${file}`, '--sandbox', 'off', '--test-command', TEST_COMMAND, ...extra], opts.env ? { env: opts.env } : {});
  return { ...r, runIds: listRuns(repo) };
}

export function listRuns(repo: string): string[] {
  try {
    return readdirSync(join(repo, '.acia', 'runs')).sort();
  } catch {
    return [];
  }
}

export function terminalOf(repo: string, runId: string): { reason: string | undefined; message: string; entries: LedgerEntry[] } {
  const entries = ledgerOf(repo, runId);
  const done = entries.filter((e) => e.type === 'RUN_COMPLETED').at(-1)?.data as { reason?: string; message?: string } | undefined;
  return { reason: done?.reason, message: done?.message ?? '', entries };
}

export function verifyCode(repo: string, runId: string): CliResult {
  return acia(['verify', runId, '--repo', repo]);
}

/** The file the dev task wrote, as committed on the run branch (null when absent). */
export function fileOnRunBranch(repo: string, runId: string, path = 'VERSION'): string | null {
  try {
    return execFileSync('git', ['show', `acia/${runId}:${path}`], { cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
}

/** What each call of tool `name` returned to the model (its forModel text), from the blobs its TOOL_RESULTs name. */
export function toolOutput(repo: string, runId: string, name: string): { ok: boolean; text: string }[] {
  return ledgerOf(repo, runId)
    .filter((e) => e.type === 'TOOL_RESULT' && (e.data as { name: string }).name === name)
    .map((e) => {
      const d = e.data as { ok: boolean; outputRef: string };
      const blob = readFileSync(join(repo, '.acia', 'runs', runId, 'blobs', d.outputRef.slice('sha256:'.length)), 'utf8');
      return { ok: d.ok, text: (JSON.parse(blob) as { forModel: string }).forModel };
    });
}
