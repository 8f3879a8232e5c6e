// Runs the real executor in-process over a generated plan, fast: the PM, Dev and QA agents are answered
// by a model that follows a per-task behaviour table, git is a fake workspace that counts commits, and
// the test command's exit code follows whether a "breaking" change is merged and not yet fixed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Edge, Join, LedgerEntry } from '../../src/core/acm/contracts.js';
import type { EventDataOf } from '../../src/core/ledger/events.js';
import { MemoryLedger } from '../../src/core/ledger/memory-ledger.js';
import { loadConfig } from '../../src/core/config/load.js';
import { staticDeps } from '../../src/cli/build-deps.js';
import type { LlmClient, LlmRequest, LlmResponse } from '../../src/core/llm/types.js';
import type { CommandRunner, Tool, ToolContext, ToolResult } from '../../src/core/tools/types.js';
import type { Escalator, HumanAnswer, TeamDeps } from '../../src/team/deps.js';
import { rerunRecorded, type RunResult } from '../../src/team/team.js';
import type { RunWorkspace, TaskWorktree } from '../../src/team/workspace.js';
import { fixedClock } from '../helpers/sample-run.js';

export interface TaskPlan {
  id: string;
  capability: 'dev.implement' | 'qa.verify' | 'qa.write_tests' | 'human.approve';
  /** The `ok` fact a dev task reports (guards and expressions read it). */
  ok?: boolean;
  /** Merging this dev task breaks the tests until a dev.fix task is merged. */
  breaks?: boolean;
  /** The task changes a protected path: task.post denies it. */
  touchesProtected?: boolean;
  verification?: string[];
  /** Attempts (retry.attempts); 1 keeps generated runs short. */
  attempts?: number;
}

export interface GeneratedPlan {
  tasks: TaskPlan[];
  edges: Edge[];
  joins: Join[];
}

let baseRepo: { repo: string; head: string } | null = null;

/** One tiny real git repository for every run: the context packet is read from its commit. */
export function sharedRepo(): { repo: string; head: string } {
  if (baseRepo) return baseRepo;
  const repo = mkdtempSync(join(tmpdir(), 'acia-inproc-'));
  const g = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
  g('init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'README.md'), '# tiny\n');
  g('add', '-A');
  g('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'base');
  baseRepo = { repo, head: g('rev-parse', 'HEAD') };
  return baseRepo;
}

class World {
  broken = false;
  head: string;
  private n = 0;
  readonly changed = new Map<string, string[]>();
  constructor(
    base: string,
    private readonly plan: GeneratedPlan,
  ) {
    this.head = base;
  }
  spec(id: string): TaskPlan | undefined {
    return this.plan.tasks.find((t) => t.id === id);
  }
  commit(prefix: string): string {
    this.n++;
    return `${prefix}${String(this.n).padStart(39, '0')}`.slice(0, 40);
  }
}

class FakeWorkspace implements RunWorkspace {
  readonly runBranch = 'acia/run';
  readonly runWorktree = '/fake/@run';
  constructor(private readonly w: World) {}
  openRun(): Promise<void> {
    return Promise.resolve();
  }
  runHead(): Promise<string> {
    return Promise.resolve(this.w.head);
  }
  prepareTask(taskId: string): Promise<TaskWorktree> {
    return Promise.resolve({ path: `/fake/${taskId}`, branch: `acia-tasks/run/${taskId}`, baseCommit: this.w.head });
  }
  checkpoint(taskId: string): Promise<{ commit: string | null; files: string[] }> {
    const files = this.w.changed.get(taskId) ?? [];
    return Promise.resolve(files.length === 0 ? { commit: null, files } : { commit: this.w.commit('c'), files });
  }
  merge(taskId: string): Promise<{ commit: string | null; conflict: boolean; files: string[] }> {
    if (this.w.spec(taskId)?.breaks) this.w.broken = true;
    if (/-fix\d+$/.test(taskId)) this.w.broken = false;
    this.w.head = this.w.commit('a');
    return Promise.resolve({ commit: this.w.head, conflict: false, files: this.w.changed.get(taskId) ?? [] });
  }
  resetRun(commit: string): Promise<void> {
    this.w.head = commit;
    this.w.broken = false;
    return Promise.resolve();
  }
  changedSinceBase(): Promise<string[]> {
    return Promise.resolve([]);
  }
  diffSize(): Promise<number> {
    return Promise.resolve(0);
  }
  adopt(): Promise<void> {
    // Best-of-N is not exercised here: one Dev agent per task.
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

function reply(id: string, name: string, input: unknown): LlmResponse {
  return {
    content: [{ type: 'tool_use', id, name, input }],
    stopReason: 'tool_use',
    usage: { inputTokens: 10, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
    model: 'fake',
    requestId: null,
  };
}

/** Answers each agent from the plan's behaviour table. */
function fakeModel(w: World, plan: GeneratedPlan, goalId: () => string): LlmClient {
  let calls = 0;
  return {
    provider: 'fake',
    complete: (r: LlmRequest) => {
      calls++;
      const tu = `toolu_${calls}`;
      const [role, taskId = ''] = r.caller.split(':');
      const afterTool = r.messages.at(-1)?.role === 'user' && typeof r.messages.at(-1)?.content !== 'string';
      if (role === 'pm') {
        void goalId;
        return Promise.resolve(
          reply(tu, 'return_result', {
            plans: [
              {
                id: 'plan-A',
                rationale: 'generated',
                tasks: plan.tasks.map((t) => ({
                  id: t.id,
                  capability: t.capability,
                  input: t.capability === 'human.approve' ? { question: `approve ${t.id}?` } : t.capability === 'qa.verify' ? {} : { instructions: `do ${t.id}` },
                  ...(t.verification ? { verification: t.verification } : {}),
                  retry: { attempts: t.attempts ?? 1, backoff: 'fixed', baseMs: 0, jitter: false },
                })),
                edges: plan.edges,
                joins: plan.joins,
              },
            ],
            chosenPlanId: 'plan-A',
            selectionRationale: 'the only plan',
          }),
        );
      }
      const spec = w.spec(taskId);
      if (role === 'dev') {
        const files = spec?.touchesProtected ? ['secret/key.txt'] : [`src/${taskId}.js`];
        w.changed.set(taskId, files);
        return Promise.resolve(reply(tu, 'return_result', { summary: `did ${taskId}`, facts: { ok: spec?.ok ?? true } }));
      }
      // QA: run the tests, then report.
      w.changed.set(taskId, spec?.capability === 'qa.write_tests' || spec?.touchesProtected ? [spec.touchesProtected ? 'secret/test.txt' : `test/${taskId}.test.js`] : []);
      if (!afterTool) return Promise.resolve(reply(tu, 'run_tests', {}));
      return Promise.resolve(reply(tu, 'return_result', { passed: true, summary: `ran tests for ${taskId}` }));
    },
  };
}

function fakeCallTool(w: World) {
  return (tool: Tool, _input: unknown, ctx: ToolContext): Promise<ToolResult> => {
    if (tool.name !== 'run_tests') return Promise.resolve({ ok: false, forModel: 'not available', forDisplay: '' });
    // Tests written first fail in their own worktree until the code exists.
    const own = w.spec(ctx.root.split('/').pop() ?? '');
    const exitCode = w.broken || (own?.capability === 'qa.write_tests' && own.breaks === true) ? 1 : 0;
    return Promise.resolve({
      ok: exitCode === 0,
      forModel: exitCode === 0 ? '3 passed' : '1 failed',
      forDisplay: '',
      data: { exitCode, passed: 3, failed: exitCode === 0 ? 0 : 1, command: 'npm test' },
    });
  };
}

/** Answers escalations from a list, then leaves the run waiting. */
export function scriptedHuman(answers: HumanAnswer[]): Escalator {
  const queue = [...answers];
  return { ask: () => Promise.resolve(queue.shift() ?? null) };
}

export interface InProcessRun {
  result: RunResult;
  entries: readonly LedgerEntry[];
}

export async function runPlanInProcess(plan: GeneratedPlan, opts: { human?: Escalator; maxIterations?: number } = {}): Promise<InProcessRun> {
  const { repo, head } = sharedRepo();
  const w = new World(head, plan);
  const runId = '20260102-030405-abcdef';
  const clock = fixedClock();
  const ledger = new MemoryLedger(runId, clock);
  const { config } = loadConfig({
    repo,
    env: {},
    userFile: null,
    flags: { model: 'scripted:none.json', sandbox: 'off', testCommand: 'npm test', parallel: 1, maxIterations: opts.maxIterations ?? 1 },
  });
  const cfg = { ...config, protectedPaths: ['secret/'] };
  const deps: TeamDeps = {
    ...staticDeps(cfg, () => undefined),
    aciaVersion: '0.0.0-test',
    llm: fakeModel(w, plan, () => ''),
    model: 'fake',
    modelSpec: 'scripted:none.json',
    clock,
    ids: { runId: () => runId as never },
    // Never called: the fake model runs no commands and run_tests is answered by the world.
    runnerFor: () => ({}) as CommandRunner,
    fs: (await import('node:fs')).default,
    callTool: fakeCallTool(w),
    openLedger: () => Promise.resolve(ledger),
    escalator: opts.human ?? scriptedHuman([]),
    readMemory: () => Promise.resolve([]),
    memoryPages: { read: () => Promise.resolve(null), write: () => Promise.resolve() },
    renderWiki: () => Promise.resolve(),
    writeManifest: () => Promise.resolve(),
    workspace: () => new FakeWorkspace(w),
    sleep: () => Promise.resolve(),
  };
  const started: EventDataOf<'RUN_STARTED'> = {
    goal: { id: `goal-${runId}`, intent: 'generated goal', constraints: {}, contextRequired: true },
    repo,
    baseCommit: head,
    baseBranch: 'main',
    runBranch: 'acia/run',
    model: 'scripted:none.json',
    settings: { parallel: 1, maxIterations: opts.maxIterations ?? 1, sandbox: 'off', budget: {} },
    aciaVersion: '0.0.0-test',
  };
  const result = await rerunRecorded(deps, repo, runId, ledger, started);
  return { result, entries: ledger.entries() };
}
