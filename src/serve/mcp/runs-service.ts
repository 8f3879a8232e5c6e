// What `acia mcp` does, independent of MCP: start, resume or stop runs (each a job, see run-launch.ts),
// report status, list, show and verify runs. It uses the library API, like the CLI.
import { join, resolve } from 'node:path';
import type { LedgerEntry } from '../../core/ledger/entry.js';
import { systemClock } from '../../core/acm/ids.js';
import { AciaError } from '../../core/errors.js';
import { readWikiPage, requireRunDir } from '../../core/contain/acia-state.js';
import { readRegularFile } from '../../core/contain/no-follow.js';
import { requireRunId } from '../../core/contain/run-id.js';
import { readLedgerEntries } from '../../core/ledger/line-reader.js';
import { listRuns } from '../../core/ledger/manifest.js';
import { verifyRun, type RunVerification } from '../../core/ledger/verify.js';
import { Git, repoRoot, requireCommit } from '../../team/git.js';
import { finishedReason, foldRun, openEscalation } from '../../team/run-state.js';
import { latestResumableRun, type RunResult } from '../../team/team.js';
import { describeEntry } from '../../app/describe.js';
import { sayToRun, type SayResult } from '../../app/say-run.js';
import { whoAmI } from '../../app/who-am-i.js';
import type { MessageMode } from '../../core/contain/message-request.js';
import { cancelRun } from '../../app/cancel-run.js';
import { runOwnerPid } from '../../app/run-owner.js';
import { inProcess, type LaunchedRun, type Launcher } from './run-launch.js';
import type { RunEvent, RunJob } from './run-job.js';

export type { RunEvent } from './run-job.js';

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

interface Active {
  repo: string;
  run: LaunchedRun;
  result: RunResult | null;
}

/** How a cancel ended: the run's terminal result once it recorded the stop. */
export interface Cancelled {
  runId: string;
  reason: string;
  message: string;
  resumable: boolean;
}

/** How long a cancel waits for a run in another process to record that it stopped. */
const CANCEL_WAIT_MS = 60_000;

export class RunsService {
  private readonly active = new Map<string, Active>();

  constructor(
    private readonly defaultRepo: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly warn: (line: string) => void,
    /** Where runs execute: `inProcess` (the library default) or a child process per run (`acia mcp`). */
    private readonly launcher: Launcher = inProcess,
  ) {}

  /** Starts a run and resolves with its id once RUN_STARTED is written; `done` resolves when it stops. */
  async start(o: RunOptions, onEvent: (e: RunEvent) => void): Promise<{ runId: string; done: Promise<RunResult> }> {
    const repo = await this.repoOf(o.repo);
    await requireCommit(new Git(systemClock), repo);
    return this.launch({ kind: 'start', repo, goal: o.goal, includeUncommitted: o.includeUncommitted ?? false, flags: flagsOf(o) }, onEvent);
  }

  /** Answers the open escalation of a run and resumes it, like `acia resume <run> --answer`. */
  async answer(runId: string, answer: string, repoArg: string | undefined, onEvent: (e: RunEvent) => void): Promise<{ runId: string; done: Promise<RunResult> }> {
    const { repo, flags } = await this.resumable(runId, repoArg, (state) => {
      if (openEscalation(state) === null) throw new AciaError('USAGE', `run ${runId} is not waiting for an answer (${state.completed?.reason ?? 'interrupted'})`, { hint: 'an interrupted run continues with acia_resume' });
    });
    return this.launch({ kind: 'resume', repo, runId, answer, flags }, onEvent);
  }

  /** Continues an interrupted run (its waiting call was cancelled, or its process died), like `acia resume <run>`. */
  async resume(runId: string, repoArg: string | undefined, onEvent: (e: RunEvent) => void): Promise<{ runId: string; done: Promise<RunResult> }> {
    const { repo, flags } = await this.resumable(runId, repoArg, (state) => {
      if (openEscalation(state) !== null) throw new AciaError('USAGE', `run ${runId} waits for a human answer`, { hint: 'answer it with acia_answer' });
    });
    return this.launch({ kind: 'resume', repo, runId, flags }, onEvent);
  }

  /**
   * Cancels a run as `acia cancel` does (app/cancel-run.ts, the request file beside its ledger that the
   * session running it watches): it stops at its next safe point, wherever it runs on this machine (a
   * run of this server, of another server, `acia run`), and its ledger ends `cancelled`, for good. A run
   * nobody runs (waiting for a human, or whose process died) is closed at once. Stopping without ending
   * it (resumable) is what cancelling a waiting call does.
   */
  async cancel(runId: string, repoArg: string | undefined): Promise<Cancelled> {
    const repo = await this.repoOf(repoArg);
    requireRunId(runId, repo, 'list runs with acia_runs');
    const r = await cancelRun({ repo, runId, env: this.env, by: 'acia mcp (acia_cancel)', timeoutMs: CANCEL_WAIT_MS });
    if (r.kind === 'requested') throw new AciaError('LEDGER_LOCKED', `run ${runId} was asked to stop but has not recorded it within ${CANCEL_WAIT_MS / 1000} s; it stops at its next safe point`);
    const state = foldRun(await readEntries(repo, runId));
    // Returned once the run is free again: its process may still be writing the wiki after its end.
    await this.ownerGone(repo, runId);
    await this.active.get(runId)?.run.done.catch(() => undefined);
    const end = state.completed;
    return { runId, reason: end?.reason ?? 'cancelled', message: end?.message ?? 'cancelled', resumable: finishedReason(state) === null };
  }

  async status(runId: string | undefined, repoArg: string | undefined): Promise<Record<string, unknown>> {
    const repo = await this.repoOf(repoArg);
    const id = runId ?? (await latestResumableRun(repo));
    const entries = await readEntries(repo, id);
    const state = foldRun(entries);
    const open = openEscalation(state);
    const live = this.active.get(id);
    // The ledger's end is the answer as soon as it is written (the process may still be writing the wiki).
    const running = state.completed === null && ((live !== undefined && live.result === null) || runOwnerPid(repo, runDirChecked(repo, id)) !== null);
    return {
      runId: id,
      status: running ? 'running' : (state.completed?.reason ?? 'interrupted'),
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
    await this.stop([...this.active.keys()]);
  }

  /** Stops these runs and waits for them to record it (`acia_cancel` semantics, for runs of this server). */
  async stop(runIds: readonly string[]): Promise<void> {
    const runs = runIds.map((id) => this.active.get(id)).filter((a): a is Active => a !== undefined);
    for (const a of runs) a.run.interrupt();
    await Promise.all(runs.map((a) => a.run.done.catch(() => undefined)));
  }

  /**
   * The client went away: these runs go on in their own processes and finish (or wait for a human) on
   * their own; `acia_status` and `acia_cancel` from any later server still reach them. Returns the ids
   * that could not be detached (in-process runs), which the caller stops instead.
   */
  detach(runIds: readonly string[]): string[] {
    const kept: string[] = [];
    for (const id of runIds) {
      const a = this.active.get(id);
      if (!a || a.result !== null) continue;
      if (!a.run.detachable) {
        kept.push(id);
        continue;
      }
      a.run.detach();
      this.active.delete(id);
    }
    return kept;
  }

  /** The runs of this server that have not stopped. */
  running(): string[] {
    return [...this.active.entries()].filter(([, a]) => a.result === null).map(([id]) => id);
  }

  /** The run's repository and recorded settings, once `check` accepts its state and it is not finished. */
  private async resumable(runId: string, repoArg: string | undefined, check: (state: ReturnType<typeof foldRun>) => void) {
    const repo = await this.repoOf(repoArg);
    let state = foldRun(await readEntries(repo, runId));
    const live = this.active.get(runId);
    if (live && live.result === null) {
      // A run that recorded its end may still be writing its wiki page: that is waited for, not refused.
      if (state.completed === null) throw new AciaError('LEDGER_LOCKED', `run ${runId} is still running in this server; wait for it to stop, or stop it with acia_cancel`);
      await live.run.done.catch(() => undefined);
    } else if (state.completed !== null) {
      await this.ownerGone(repo, runId);
    }
    state = foldRun(await readEntries(repo, runId));
    if (!state.started) throw new AciaError('RUN_NOT_FOUND', `run ${runId} never started`);
    check(state);
    const finished = finishedReason(state);
    if (finished !== null) throw new AciaError('RUN_FINISHED', `run ${runId} is finished (${finished}); there is nothing to resume`);
    // Resumed with the model and settings the run recorded, as `acia resume` does: the job loads them as
    // loadConfig's recorded layer (app/prepare-run.ts), so no flag is derived from them here.
    const flags: Record<string, unknown> = {};
    return { repo, flags, state };
  }

  /** Waits (bounded) for the process that drove a run to let go of it after recording its end. */
  private async ownerGone(repo: string, runId: string): Promise<void> {
    const dir = runDirChecked(repo, runId);
    const until = Date.now() + CANCEL_WAIT_MS;
    while (runOwnerPid(repo, dir) !== null && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  }

  private async launch(job: RunJob, onEvent: (e: RunEvent) => void): Promise<{ runId: string; done: Promise<RunResult> }> {
    const run = await this.launcher(job, this.env, onEvent, this.warn);
    const active: Active = { repo: job.repo, run, result: null };
    this.active.set(run.runId, active);
    run.done.then(
      (r) => {
        active.result = r;
        if (this.active.get(run.runId) === active) this.active.delete(run.runId);
      },
      () => {
        if (this.active.get(run.runId) === active) this.active.delete(run.runId);
      },
    );
    return { runId: run.runId, done: run.done };
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

