// What `acia mcp` does, independent of MCP: start a run or answer an escalation in the background
// (this process), report status, list, show and verify runs. It uses the library API, like the CLI.
import { join, resolve } from 'node:path';
import type { LedgerEntry } from '../../core/ledger/entry.js';
import { systemClock } from '../../core/acm/ids.js';
import { loadConfig } from '../../core/config/load.js';
import { AciaError } from '../../core/errors.js';
import { readWikiPage, requireRunDir } from '../../core/contain/acia-state.js';
import { readRegularFile } from '../../core/contain/no-follow.js';
import { readLedgerEntries } from '../../core/ledger/line-reader.js';
import { listRuns } from '../../core/ledger/manifest.js';
import { verifyRun, type RunVerification } from '../../core/ledger/verify.js';
import { noHuman } from '../../team/deps.js';
import { Git, repoRoot, requireCommit } from '../../team/git.js';
import { foldRun, openEscalation } from '../../team/run-state.js';
import { latestResumableRun, resumeRun, startRun, type RunResult } from '../../team/team.js';
// The library API's run assembly (what `acia run` uses too); never the CLI's commands.
import { buildDeps, preflightModel } from '../../app/build-deps.js';
import { describeEntry } from '../../app/describe.js';
import { sayToRun, type SayResult } from '../../app/say-run.js';
import { whoAmI } from '../../app/who-am-i.js';
import type { MessageMode } from '../../core/contain/message-request.js';

/** Options of acia_run as its arguments arrive (an argument not given may be present as undefined). */
export interface RunOptions {
  goal: string;
  repo?: string | undefined;
  /** `anthropic:<id>`, `openai:<id>` or `scripted:<file>` (a path relative to the repository). */
  model?: string | undefined;
  parallel?: number | undefined;
  maxIterations?: number | undefined;
  maxCostUsd?: number | undefined;
  maxMinutes?: number | undefined;
  testCommand?: string | undefined;
  includeUncommitted?: boolean | undefined;
}

/** One line per ledger entry, for progress notifications. */
export interface RunEvent {
  runId: string;
  seq: number;
  actor: string;
  type: string;
  text: string;
}

interface Active {
  repo: string;
  done: Promise<RunResult>;
  controller: AbortController;
  result: RunResult | null;
  error: AciaError | null;
}

export class RunsService {
  private readonly active = new Map<string, Active>();

  constructor(
    private readonly defaultRepo: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly warn: (line: string) => void,
  ) {}

  /** Starts a run and resolves with its id once RUN_STARTED is written; `done` resolves when it stops. */
  start(o: RunOptions, onEvent: (e: RunEvent) => void): Promise<{ runId: string; done: Promise<RunResult> }> {
    return this.launch(o.repo, flagsOf(o), onEvent, (deps, repo) => startRun(deps, { dir: repo, goal: o.goal, includeUncommitted: o.includeUncommitted ?? false }), true);
  }

  /** Answers the open escalation of a run and resumes it, like `acia resume <run> --answer`. */
  async answer(runId: string, answer: string, repoArg: string | undefined, onEvent: (e: RunEvent) => void): Promise<{ runId: string; done: Promise<RunResult> }> {
    if (this.active.has(runId)) throw new AciaError('LEDGER_LOCKED', `run ${runId} is still running in this server; wait for it to stop before answering`);
    const repo = await this.repoOf(repoArg);
    const entries = await readEntries(repo, runId);
    const state = foldRun(entries);
    if (openEscalation(state) === null) throw new AciaError('USAGE', `run ${runId} is not waiting for an answer (${state.completed?.reason ?? 'running or interrupted'})`);
    // Resume with the model and settings the run started with, as `acia resume` does.
    const s = state.started!.settings;
    const flags: Record<string, unknown> = { model: state.started!.model, parallel: s.parallel, maxIterations: s.maxIterations, sandbox: s.sandbox, budget: s.budget };
    return this.launch(repo, flags, onEvent, (deps) => resumeRun(deps, { dir: repo, runId, answer }), false, runId);
  }

  async status(runId: string | undefined, repoArg: string | undefined): Promise<Record<string, unknown>> {
    const repo = await this.repoOf(repoArg);
    const id = runId ?? (await latestResumableRun(repo));
    const entries = await readEntries(repo, id);
    const state = foldRun(entries);
    const open = openEscalation(state);
    const live = this.active.get(id);
    return {
      runId: id,
      status: live && live.result === null ? 'running' : (state.completed?.reason ?? 'interrupted'),
      goal: state.started?.goal.intent ?? null,
      plan: state.plan?.id ?? null,
      tasks: [...state.tasks.entries()].map(([taskId, t]) => ({ taskId, capability: t.spec.capability, status: t.status, attempts: t.attempts })),
      costUsd: state.costKnown ? state.costUsd : null,
      tokens: state.tokens,
      escalation: open === null ? null : { reason: open.reason, taskId: open.taskId ?? null, message: open.message, options: open.options, answerWith: 'acia_answer' },
      lastEntries: entries.slice(-5).map((e) => `${e.seq} ${e.actor} ${describeEntry(e)}`),
    };
  }

  async runs(repoArg: string | undefined): Promise<unknown[]> {
    return listRuns(await this.repoOf(repoArg));
  }

  async show(runId: string, repoArg: string | undefined): Promise<string> {
    const repo = await this.repoOf(repoArg);
    const entries = await readEntries(repo, runId);
    const state = foldRun(entries);
    const lines = [`run ${runId}: ${state.completed?.reason ?? 'running or interrupted'}`, `goal: ${state.started?.goal.intent ?? '?'}`];
    if (state.plan) lines.push(`plan ${state.plan.id}: ${state.plan.rationale}`);
    for (const [id, t] of state.tasks) lines.push(`  ${t.status.padEnd(9)} ${id} ${t.spec.capability} attempts ${t.attempts}`);
    lines.push('', 'ledger:');
    for (const e of entries) lines.push(`  ${String(e.seq).padStart(4)} ${e.actor.padEnd(12)} ${describeEntry(e)}`);
    return lines.join('\n');
  }

  /** `acia say` for an MCP client: the same checks and the same inbox; the author says it came over MCP. */
  async say(runId: string, text: string, o: { task?: string | undefined; mode?: MessageMode | undefined }, repoArg: string | undefined): Promise<SayResult> {
    return sayToRun({ repo: await this.repoOf(repoArg), runId, text, ...(o.task === undefined ? {} : { task: o.task }), ...(o.mode === undefined ? {} : { mode: o.mode }), author: `${whoAmI()} (MCP)` });
  }

  async verify(runId: string, repoArg: string | undefined): Promise<RunVerification> {
    const repo = await this.repoOf(repoArg);
    return verifyRun(runDirChecked(repo, runId));
  }

  /** A run's resources: its ledger lines, its chosen plan, its wiki page. */
  async resource(runId: string, what: 'ledger' | 'plan' | 'wiki', repoArg?: string): Promise<{ mimeType: string; text: string }> {
    const repo = await this.repoOf(repoArg);
    const dir = runDirChecked(repo, runId);
    // No link is followed: a clone's ledger.jsonl pointing at ~/.ssh/id_rsa is refused, not served.
    if (what === 'ledger') return { mimeType: 'application/x-ndjson', text: (readRegularFile(repo, join(dir, 'ledger.jsonl')) ?? Buffer.alloc(0)).toString('utf8') };
    if (what === 'plan') {
      const state = foldRun(await readEntries(repo, runId));
      if (!state.plan) throw new AciaError('FILE_NOT_FOUND', `run ${runId} has no chosen plan yet`);
      return { mimeType: 'application/json', text: JSON.stringify({ chosen: state.plan, planSet: state.planSet }, null, 2) };
    }
    return this.wikiPage(`runs/${runId}.md`, repo);
  }

  async wikiPage(page: string, repoArg?: string): Promise<{ mimeType: string; text: string }> {
    const repo = await this.repoOf(repoArg);
    // Only pages under .acia/wiki, by a plain relative path, never through a link (core/contain).
    const bytes = readWikiPage(repo, page);
    if (bytes === null) throw new AciaError('FILE_NOT_FOUND', `no wiki page ${page} in ${repo}`, { hint: 'pages are rendered when a run stops; `acia wiki rebuild` renders them again' });
    return { mimeType: 'text/markdown', text: bytes.toString('utf8') };
  }

  async runIds(repoArg?: string): Promise<string[]> {
    return (await listRuns(await this.repoOf(repoArg))).map((r) => r.runId);
  }

  /** Stops every run this server started (the server is going away) and waits for them to record it. */
  async shutdown(): Promise<void> {
    for (const a of this.active.values()) a.controller.abort();
    await Promise.all([...this.active.values()].map((a) => a.done.catch(() => undefined)));
  }

  private async launch(
    repoArg: string | undefined,
    flags: Record<string, unknown>,
    onEvent: (e: RunEvent) => void,
    go: (deps: Awaited<ReturnType<typeof buildDeps>>, repo: string) => Promise<RunResult>,
    fresh: boolean,
    knownRunId?: string,
  ): Promise<{ runId: string; done: Promise<RunResult> }> {
    const repo = await this.repoOf(repoArg);
    await requireCommit(new Git(systemClock), repo);
    const { config } = loadConfig({ repo, env: this.env, flags });
    if (fresh) preflightModel(config, this.env, false, repo);
    const controller = new AbortController();
    let runId = knownRunId;
    let announce: (id: string) => void = () => undefined;
    const started = new Promise<string>((r) => (announce = r));
    if (runId !== undefined) announce(runId);
    const deps = await buildDeps({
      repo,
      config,
      env: this.env,
      escalator: noHuman,
      signal: controller.signal,
      warn: this.warn,
      onEvent: (ev) => {
        if (ev.kind !== 'entry') return;
        const e: LedgerEntry = ev.entry;
        if (runId === undefined) {
          runId = e.runId;
          announce(e.runId);
        }
        onEvent({ runId: e.runId, seq: e.seq, actor: e.actor, type: e.type, text: describeEntry(e) });
      },
    });
    const done = go(deps, repo);
    const first = await Promise.race([started, done.then((r) => r.runId)]);
    const active: Active = { repo, done, controller, result: null, error: null };
    this.active.set(first, active);
    done.then(
      (r) => {
        active.result = r;
        this.active.delete(first);
      },
      () => this.active.delete(first),
    );
    return { runId: first, done };
  }

  private async repoOf(repoArg: string | undefined): Promise<string> {
    return repoRoot(new Git(systemClock), resolve(this.defaultRepo, repoArg ?? '.'));
  }
}

function flagsOf(o: RunOptions): Record<string, unknown> {
  const budget = {
    ...(o.maxCostUsd === undefined ? {} : { maxCostUsd: o.maxCostUsd }),
    ...(o.maxMinutes === undefined ? {} : { maxMinutes: o.maxMinutes }),
  };
  return Object.fromEntries(
    Object.entries({
      model: o.model,
      parallel: o.parallel,
      maxIterations: o.maxIterations,
      testCommand: o.testCommand,
      ...(Object.keys(budget).length > 0 ? { budget } : {}),
    }).filter(([, v]) => v !== undefined),
  );
}

function runDirChecked(repo: string, runId: string): string {
  return requireRunDir(repo, runId, { needLedger: true, hint: 'list runs with acia_runs' });
}

async function readEntries(repo: string, runId: string): Promise<LedgerEntry[]> {
  const out: LedgerEntry[] = [];
  for await (const e of readLedgerEntries(join(runDirChecked(repo, runId), 'ledger.jsonl'))) out.push(e);
  return out;
}

