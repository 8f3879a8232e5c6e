// Serves a recorded session back to the team: model responses by request hash, tool results and git
// outcomes in the order each task met them, and the human's answers in order. Each session of a run
// (its start, then each resume) is served what it recorded, and stops where its recording stops.
import { runWorktreesDir } from '../core/contain/acia-state.js';
import { basename, join } from 'node:path';
import { canonicalJson, contentAddress } from '../core/acm/canonical-json.js';
import { dataOf, firstOf, lastOf, type EntryOf, type LedgerEntry } from '../core/ledger/entry.js';
import { foldRun } from '../core/run/reducer.js';
import { AciaError } from '../core/errors.js';
import type { EventDataOf } from '../core/ledger/events.js';
import type { LlmClient, LlmRequest, LlmResponse } from '../core/llm/types.js';
import type { RunTestsData } from '../core/tools/run-tests.js';
import type { Tool, ToolContext, ToolResult } from '../core/tools/types.js';
import type { Escalator, HumanAnswer } from './deps.js';
import { visibleRequest } from './run-context.js';
import { never, type SessionGate } from './replay-session.js';
import type { RunWorkspace, TaskWorktree } from './workspace.js';

type GetBlob = (ref: string) => Promise<Buffer>;

/**
 * Model responses by request hash, in the order this session got them (a request made again after a
 * crash may have had another answer): a session asked for more than it recorded died, or diverged.
 */
/** A recorded response: its reference, and its text when the entry carries it. */
interface Recorded {
  ref: string;
  text: string | null;
}

export class ReplayLlm implements LlmClient {
  readonly provider = 'replay';
  private readonly byHash = new Map<string, Recorded[]>();
  private readonly lastOf = new Map<string, Recorded>();

  constructor(
    session: readonly LedgerEntry[],
    private readonly getBlob: GetBlob,
    private readonly gate: SessionGate,
  ) {
    for (const c of dataOf(session, 'LLM_CALL')) push(this.byHash, c.requestHash, { ref: c.responseRef, text: c.response ?? null });
  }

  complete(request: LlmRequest): Promise<LlmResponse> {
    return this.gate.run(async () => {
      const hash = contentAddress(visibleRequest(request));
      // The same request again within a session (a call repeated without being recorded twice) gets the last answer.
      const got = this.byHash.get(hash)?.shift() ?? this.lastOf.get(hash);
      if (got === undefined) return this.gate.exhausted<LlmResponse>(`replay: ${request.caller} made a model request that was never recorded (${hash.slice(0, 19)}…)`);
      this.lastOf.set(hash, got);
      // A response the entry carries (inline-blobs.ts) is the chain's; one in a blob file is read from it.
      return JSON.parse(got.text ?? (await this.getBlob(got.ref)).toString('utf8')) as LlmResponse;
    });
  }
}

/** Tool results per task, in the order this session recorded them; the team's own test runs (team_run verifications) too. */
export function replayCallTool(session: readonly LedgerEntry[], toolNames: ReadonlySet<string>, getBlob: GetBlob, gate: SessionGate) {
  const queues = new Map<string, Array<EntryOf<'TOOL_RESULT'> | EntryOf<'VERIFICATION'>>>();
  for (const e of session) {
    // A call a hook blocked never ran: the replay blocks it again, and its result is no tool's output.
    const fromTool = e.type === 'TOOL_RESULT' && toolNames.has(e.data.name) && e.data.data?.blockedBy === undefined;
    const fromTeam = e.type === 'VERIFICATION' && e.data.source === 'team_run';
    if (!fromTool && !fromTeam) continue;
    push(queues, e.data.taskId ?? '', e);
  }
  // Read-only calls of one turn run concurrently and finish in any order: a call is served the first
  // recorded result of the same tool with the same input, wherever it sits in the task's queue.
  const inputs = new Map<string, string>();
  for (const { toolUseId, input } of dataOf(session, 'TOOL_CALL')) inputs.set(toolUseId, canonicalJson(input ?? null));
  return (tool: Tool, input: unknown, ctx: ToolContext): Promise<ToolResult> =>
    gate.run(async () => {
      const dir = basename(ctx.root);
      const key = dir === '@run' ? 'plan' : dir;
      const queue = queues.get(key);
      const wanted = canonicalJson(input ?? null);
      const at = queue?.findIndex((e) => e.type === 'TOOL_RESULT' && e.data.name === tool.name && inputs.get(e.data.toolUseId) === wanted) ?? -1;
      const next = at > 0 ? queue!.splice(at, 1)[0] : queue?.shift();
      if (!next) return gate.exhausted<ToolResult>(`replay: task ${key} called ${tool.name} more often than recorded`);
      if (next.type === 'TOOL_RESULT') {
        const d = next.data;
        if (d.name !== tool.name) throw new AciaError('REPLAY_DIVERGED', `replay: task ${key} called ${tool.name} where ${d.name} was recorded (seq ${next.seq})`);
        const body = JSON.parse((await getBlob(d.outputRef)).toString('utf8')) as { forModel: string; forDisplay: string };
        return { ok: d.ok, forModel: body.forModel, forDisplay: body.forDisplay, ...(d.data === undefined ? {} : { data: d.data }) };
      }
      const v = next.data;
      const body = JSON.parse((await getBlob(v.outputRef)).toString('utf8')) as { forModel: string; forDisplay: string };
      // The team's own test run as run_tests' result: what the verdict was read from (not the framework or timing).
      const data: RunTestsData = { exitCode: v.exitCode, passed: v.passedCount, failed: v.failedCount, command: v.command, framework: null, timedOut: false, ...(v.cannotRun === undefined ? {} : { cannotRun: v.cannotRun }) };
      return { ok: v.passed, forModel: body.forModel, forDisplay: body.forDisplay, data };
    });
}

/** The human's answers this session recorded, in order; none left is no human at hand. */
export function replayEscalator(session: readonly LedgerEntry[], gate: SessionGate, resumedWithAnswer = false): Escalator {
  const answers = dataOf(session, 'HUMAN_RESPONSE');
  // A session resumed with an answer recorded that answer itself (the resume replays it): the rest were asked.
  if (resumedWithAnswer) answers.shift();
  return {
    ask: (): Promise<HumanAnswer | null> =>
      gate.run(() => {
        const a = answers.shift();
        return Promise.resolve(a ? { action: a.action, ...(a.text === undefined ? {} : { text: a.text }) } : null);
      }),
  };
}

/**
 * The git outcomes a task met in this session, in order; nothing is created, committed or merged. An
 * attempt is the one after those the replayed ledger holds (across sessions and fleet hand-outs), as
 * for the team, which numbers attempts from its fold.
 */
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
    all: readonly LedgerEntry[],
    session: readonly LedgerEntry[],
    private readonly replayed: () => readonly LedgerEntry[],
    private readonly repo: string,
    private readonly runId: string,
    private readonly gate: SessionGate,
  ) {
    const started = firstOf(all, 'RUN_STARTED')?.data;
    this.runBranch = started?.runBranch ?? `acia/${runId}`;
    this.runWorktree = join(runWorktreesDir(repo, runId), '@run');
    this.head = foldRun(replayed()).runHead ?? started?.baseCommit ?? '';
    for (const s of dataOf(all, 'TASK_STARTED')) push(this.starts, s.taskId, s);
    for (const c of dataOf(all, 'CHECKPOINT')) push(this.checkpoints, c.taskId, c);
    for (const m of dataOf(session, 'MERGE')) push(this.merges, m.taskId, m);
    for (const a of dataOf(all, 'TASK_ADDED')) {
      const input = a.task.input;
      if (a.reason === 'merge' && typeof input.task === 'string' && typeof input.conflicts === 'string') this.mergeHunks.set(input.task, input.conflicts);
    }
    const end = lastOf(session, 'RUN_COMPLETED')?.data;
    this.finalFiles = end?.filesChanged ?? [];
    this.finalHead = end?.headCommit ?? null;
  }

  openRun(): Promise<void> {
    return Promise.resolve();
  }
  runHead(): Promise<string> {
    return Promise.resolve(this.finalHead ?? this.head);
  }
  prepareTask(taskId: string): Promise<TaskWorktree> {
    const n = dataOf(this.replayed(), 'TASK_STARTED').filter((s) => s.taskId === taskId).length + 1;
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
    if (this.gate.isCut) return never();
    const m = this.merges.get(taskId)?.shift();
    if (!m) return this.gate.exhausted(`replay: ${taskId} merged more often than recorded`);
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

