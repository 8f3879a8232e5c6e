// Where a run's hook decisions come from: live, by running the configured hooks; in a replay, from the
// POLICY_DECISION entries the run recorded (no hook runs). Either way the team records what it is given.
import type { EventInputOf } from '../ledger/events.js';
import type { LedgerEntry } from '../ledger/entry.js';
import type { CommandRunner } from '../tools/types.js';
import { truncateMiddle } from '../tools/truncate.js';
import type { ResolvedHook } from './config.js';
import { NOTIFY_EVENTS, type HookEvent } from './events.js';
import { hookInput, matchingHooks, type HookOccurrence } from './occurrence.js';
import { runHook, type HookRun } from './run-hook.js';
import { interpretHook } from './decision.js';
import { errorMessage } from '../errors.js';

/** One hook's decision as its POLICY_DECISION entry holds it (the team adds the point and the task). */
type Decision = EventInputOf<'POLICY_DECISION'>;
export interface HookDecision {
  request: { at: string };
  response: Decision['response'];
  by: NonNullable<Decision['by']>;
  inputDigest: string;
  output: NonNullable<Decision['output']>;
  durationMs: number;
}

export interface HookContext {
  /** The run's command runner for the occurrence's worktree (made only when a hook runs: a replay makes none). */
  runner: () => CommandRunner;
  /** Directories an agent or the repository can write (a hook outside the sandbox never runs code from them). */
  writable: readonly string[];
  /** What is left of the run's time (--max-minutes); absent: the hooks' own timeouts alone. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Stores the input document; returns its content address. */
  blob: (text: string) => Promise<string>;
}

export interface HookSource {
  /** Whether any hook may apply at `event` (the team builds no occurrence otherwise). */
  has(event: HookEvent): boolean;
  /**
   * The decisions of the hooks that apply at `o`, in configuration order, ending at a gate's first denial.
   * `at` names the occurrence (stable across a run's sessions and its replay).
   */
  decide(o: HookOccurrence, at: string, c: HookContext): Promise<HookDecision[]>;
}

/** Stdout and stderr as the ledger keeps them. */
const RECORDED_OUTPUT_BYTES = 4000;

/** Runs the configured hooks. */
export class LiveHooks implements HookSource {
  constructor(
    private readonly hooks: readonly ResolvedHook[],
    private readonly parentEnv: NodeJS.ProcessEnv,
  ) {}

  has(event: HookEvent): boolean {
    return this.hooks.some((h) => h.event === event);
  }

  async decide(o: HookOccurrence, at: string, c: HookContext): Promise<HookDecision[]> {
    const out: HookDecision[] = [];
    for (const hook of matchingHooks(this.hooks, o)) {
      const r = await this.run(hook, o, c);
      const v = r.verdict;
      out.push({
        request: { at },
        response: v.allow
          ? { allow: true, ...(v.context === undefined ? {} : { context: v.context }) }
          : { allow: false, reason: v.reason, ...(v.stop ? { stop: true } : {}), ...(v.failure ? { failure: v.failure } : {}) },
        by: { name: hook.id, on: hook.claudeCode ?? hook.event, command: hook.command, sandbox: hook.sandbox, source: hook.source },
        inputDigest: await c.blob(r.input),
        output: { exitCode: r.exec.exitCode, signal: r.exec.signal, timedOut: r.exec.timedOut, stdout: kept(r.exec.stdout), stderr: kept(r.exec.stderr) },
        durationMs: r.exec.durationMs,
      });
      // At a gate the first denial decides; every notification is sent, whatever another one did.
      if (!v.allow && !NOTIFY_EVENTS.has(o.event)) break;
    }
    return out;
  }

  /** A hook whose runner cannot even be made (no sandbox, the worktree gone) is a denial like any broken hook. */
  private async run(hook: ResolvedHook, o: HookOccurrence, c: HookContext): Promise<HookRun> {
    try {
      return await runHook(hook, o, { runner: c.runner(), writable: c.writable, parentEnv: this.parentEnv, ...(c.timeoutMs === undefined ? {} : { timeoutMs: c.timeoutMs }), ...(c.signal ? { signal: c.signal } : {}) });
    } catch (e) {
      const exec = { exitCode: null, signal: null, timedOut: false, stdout: '', stderr: '', durationMs: 0, startError: errorMessage(e) };
      return { input: JSON.stringify(hookInput(hook, o)), exec, verdict: interpretHook(hook.id, exec, hook.timeoutMs) };
    }
  }
}

function kept(text: string): string {
  return truncateMiddle(text, { maxBytes: RECORDED_OUTPUT_BYTES, maxLines: 100 }).text;
}

/** Serves a recorded run's hook decisions by occurrence; runs nothing. */
export class RecordedHooks implements HookSource {
  private readonly byAt = new Map<string, HookDecision[]>();
  private readonly events = new Set<string>();

  constructor(entries: readonly LedgerEntry[]) {
    for (const e of entries) {
      if (e.type !== 'POLICY_DECISION' || e.data.by === undefined) continue;
      const at = (e.data.request as { at?: unknown } | null)?.at;
      if (typeof at !== 'string') continue;
      const { by, inputDigest, output, durationMs, response } = e.data;
      if (inputDigest === undefined || output === undefined || durationMs === undefined) continue;
      this.events.add(e.data.hook);
      const list = this.byAt.get(at) ?? [];
      list.push({ request: { at }, response, by, inputDigest, output, durationMs });
      this.byAt.set(at, list);
    }
  }

  has(event: HookEvent): boolean {
    return this.events.has(event);
  }

  decide(o: HookOccurrence, at: string): Promise<HookDecision[]> {
    // A replay is one session: the recorded run.end notifications belong to sessions it does not have.
    if (o.event === 'run.end') return Promise.resolve([]);
    // One occurrence's decisions, each hook once: a name that comes again starts the next occurrence of the
    // same name (a model that reuses a call id in a later session), served when that one comes.
    const list = this.byAt.get(at) ?? [];
    const names = new Set<string>();
    let n = 0;
    while (n < list.length && !names.has(list[n]!.by.name)) names.add(list[n++]!.by.name);
    const served = list.splice(0, n);
    if (list.length === 0) this.byAt.delete(at);
    return Promise.resolve(served);
  }
}
