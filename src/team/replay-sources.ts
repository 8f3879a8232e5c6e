// Serves a recorded run back to the team: model responses by request hash, tool results and git
// outcomes in the order each task met them, and the human's answers in order.
import { runWorktreesDir } from '../core/contain/acia-state.js';
import { basename, join } from 'node:path';
import { canonicalJson, contentAddress } from '../core/acm/canonical-json.js';
import { dataOf, type EntryOf, type LedgerEntry } from '../core/ledger/entry.js';
import { AciaError } from '../core/errors.js';
import type { EventDataOf } from '../core/ledger/events.js';
import type { LlmClient, LlmRequest, LlmResponse } from '../core/llm/types.js';
import type { Tool, ToolContext, ToolResult } from '../core/tools/types.js';
import type { Escalator, HumanAnswer } from './deps.js';
import { visibleRequest } from './run-context.js';
import type { RunWorkspace, TaskWorktree } from './workspace.js';

type GetBlob = (ref: string) => Promise<Buffer>;

export class ReplayLlm implements LlmClient {
  readonly provider = 'replay';
  private readonly byHash = new Map<string, string>();

  constructor(
    entries: readonly LedgerEntry[],
    private readonly getBlob: GetBlob,
  ) {
    for (const c of dataOf(entries, 'LLM_CALL')) this.byHash.set(c.requestHash, c.responseRef);
  }

  async complete(request: LlmRequest): Promise<LlmResponse> {
    const hash = contentAddress(visibleRequest(request));
    const ref = this.byHash.get(hash);
    if (ref === undefined) {
      throw new AciaError('REPLAY_DIVERGED', `replay: ${request.caller} made a model request that was never recorded (${hash.slice(0, 19)}…)`);
    }
    return JSON.parse((await this.getBlob(ref)).toString('utf8')) as LlmResponse;
  }
}

/** Tool results per task, in recorded order; the team's own test runs (team_run verifications) too. */
export function replayCallTool(entries: readonly LedgerEntry[], toolNames: ReadonlySet<string>, getBlob: GetBlob) {
  const queues = new Map<string, Array<EntryOf<'TOOL_RESULT'> | EntryOf<'VERIFICATION'>>>();
  for (const e of entries) {
    // A call a hook blocked never ran: the replay blocks it again, and its result is no tool's output.
    const fromTool = e.type === 'TOOL_RESULT' && toolNames.has(e.data.name) && e.data.data?.blockedBy === undefined;
    const fromTeam = e.type === 'VERIFICATION' && e.data.source === 'team_run';
    if (!fromTool && !fromTeam) continue;
    const key = e.data.taskId ?? '';
    const q = queues.get(key) ?? [];
    q.push(e);
    queues.set(key, q);
  }
  // Read-only calls of one turn run concurrently and finish in any order: a call is served the first
  // recorded result of the same tool with the same input, wherever it sits in the task's queue.
  const inputs = new Map<string, string>();
  for (const { toolUseId, input } of dataOf(entries, 'TOOL_CALL')) inputs.set(toolUseId, canonicalJson(input ?? null));
  return async (tool: Tool, input: unknown, ctx: ToolContext): Promise<ToolResult> => {
    const dir = basename(ctx.root);
    const key = dir === '@run' ? 'plan' : dir;
    const queue = queues.get(key);
    const wanted = canonicalJson(input ?? null);
    const at = queue?.findIndex((e) => e.type === 'TOOL_RESULT' && e.data.name === tool.name && inputs.get(e.data.toolUseId) === wanted) ?? -1;
    const next = at > 0 ? queue!.splice(at, 1)[0] : queue?.shift();
    if (!next) throw new AciaError('REPLAY_DIVERGED', `replay: task ${key} called ${tool.name} more often than recorded`);
    if (next.type === 'TOOL_RESULT') {
      const d = next.data;
      if (d.name !== tool.name) throw new AciaError('REPLAY_DIVERGED', `replay: task ${key} called ${tool.name} where ${d.name} was recorded (seq ${next.seq})`);
      const body = JSON.parse((await getBlob(d.outputRef)).toString('utf8')) as { forModel: string; forDisplay: string };
      return { ok: d.ok, forModel: body.forModel, forDisplay: body.forDisplay, ...(d.data === undefined ? {} : { data: d.data }) };
    }
    const v = next.data;
    const body = JSON.parse((await getBlob(v.outputRef)).toString('utf8')) as { forModel: string; forDisplay: string };
    return { ok: v.passed, forModel: body.forModel, forDisplay: body.forDisplay, data: { exitCode: v.exitCode, passed: v.passedCount, failed: v.failedCount, command: v.command } };
  };
}

export function replayEscalator(entries: readonly LedgerEntry[]): Escalator {
  const answers = dataOf(entries, 'HUMAN_RESPONSE');
  return {
    ask: (): Promise<HumanAnswer | null> => {
      const a = answers.shift();
      return Promise.resolve(a ? { action: a.action, ...(a.text === undefined ? {} : { text: a.text }) } : null);
    },
  };
}

/** The git outcomes a task met, in order; nothing is created, committed or merged. */
export class ReplayWorkspace implements RunWorkspace {
  readonly runBranch: string;
  readonly runWorktree: string;
  private readonly starts = new Map<string, EventDataOf<'TASK_STARTED'>[]>();
  private readonly checkpoints = new Map<string, EventDataOf<'CHECKPOINT'>[]>();
  private readonly merges = new Map<string, EventDataOf<'MERGE'>[]>();
  private readonly mergeHunks = new Map<string, string>();
  private readonly attempt = new Map<string, number>();
  private head: string;
  private readonly finalFiles: string[];
  private readonly finalHead: string | null;

  constructor(
    entries: readonly LedgerEntry[],
    private readonly repo: string,
    private readonly runId: string,
  ) {
    const started = dataOf(entries, 'RUN_STARTED')[0];
    this.runBranch = started?.runBranch ?? `acia/${runId}`;
    this.runWorktree = join(runWorktreesDir(repo, runId), '@run');
    this.head = started?.baseCommit ?? '';
    for (const s of dataOf(entries, 'TASK_STARTED')) push(this.starts, s.taskId, s);
    for (const c of dataOf(entries, 'CHECKPOINT')) push(this.checkpoints, c.taskId, c);
    for (const m of dataOf(entries, 'MERGE')) push(this.merges, m.taskId, m);
    for (const a of dataOf(entries, 'TASK_ADDED')) {
      const input = a.task.input as { task?: unknown; conflicts?: unknown };
      if (a.reason === 'merge' && typeof input.task === 'string' && typeof input.conflicts === 'string') this.mergeHunks.set(input.task, input.conflicts);
    }
    this.finalFiles = dataOf(entries, 'RUN_COMPLETED').at(-1)?.filesChanged ?? [];
    this.finalHead = dataOf(entries, 'RUN_COMPLETED').at(-1)?.headCommit ?? null;
  }

  openRun(): Promise<void> {
    return Promise.resolve();
  }
  runHead(): Promise<string> {
    return Promise.resolve(this.finalHead ?? this.head);
  }
  prepareTask(taskId: string): Promise<TaskWorktree> {
    const n = (this.attempt.get(taskId) ?? 0) + 1;
    this.attempt.set(taskId, n);
    const rec = this.starts.get(taskId)?.find((s) => s.attempt === n) ?? this.starts.get(taskId)?.at(-1);
    return Promise.resolve({ path: join(runWorktreesDir(this.repo, this.runId), taskId), branch: rec?.branch ?? `acia-tasks/${this.runId}/${taskId}`, baseCommit: rec?.baseCommit ?? this.head });
  }
  checkpoint(taskId: string): Promise<{ commit: string | null; files: string[] }> {
    const n = this.attempt.get(taskId) ?? 1;
    const c = this.checkpoints.get(taskId)?.find((x) => x.attempt === n);
    return Promise.resolve(c ? { commit: c.commit, files: c.files } : { commit: null, files: [] });
  }
  merge(taskId: string): Promise<{ commit: string | null; conflict: boolean; files: string[] }> {
    const m = this.merges.get(taskId)?.shift();
    if (!m) return Promise.reject(new AciaError('REPLAY_DIVERGED', `replay: ${taskId} merged more often than recorded`));
    if (m.commit) this.head = m.commit;
    // The hunks a live run read before aborting its merge are in the dev.merge task it recorded.
    const hunks = m.conflict ? this.mergeHunks.get(taskId) : undefined;
    return Promise.resolve({ commit: m.commit, conflict: m.conflict, files: m.files, ...(hunks === undefined ? {} : { hunks }) });
  }
  resetRun(commit: string): Promise<void> {
    this.head = commit;
    return Promise.resolve();
  }
  /** The conflicts are in the recorded task input; replay changes no files. */
  beginMerge(): Promise<string[]> {
    return Promise.resolve([]);
  }
  commitMerge(taskId: string): Promise<{ commit: string; files: string[] }> {
    const n = this.attempt.get(taskId) ?? 1;
    const c = this.checkpoints.get(taskId)?.find((x) => x.attempt === n);
    if (!c) return Promise.reject(new AciaError('REPLAY_DIVERGED', `replay: no recorded merge commit for ${taskId} attempt ${n}`));
    return Promise.resolve({ commit: c.commit, files: c.files });
  }
  changedSinceBase(): Promise<string[]> {
    return Promise.resolve(this.finalFiles);
  }
  diffSize(): Promise<number> {
    return Promise.reject(new AciaError('REPLAY_DIVERGED', 'replay: runs with best-of-N Dev candidates cannot be replayed yet'));
  }
  adopt(): Promise<void> {
    return Promise.reject(new AciaError('REPLAY_DIVERGED', 'replay: runs with best-of-N Dev candidates cannot be replayed yet'));
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key) ?? [];
  list.push(value);
  map.set(key, list);
}

