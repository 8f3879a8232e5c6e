// A Dev task attempt done by an external ACP agent (Claude Code, Codex, Gemini CLI, ...) instead of
// ACIA's own Dev agent. The agent runs in the task's worktree inside the same sandbox as every agent
// command, with a private temporary HOME and no network but ACIA's metering proxy for its model, in the
// model API it speaks; its permission requests are answered by policy and its tool calls recorded as the
// task's trace (acp-trace.ts). The run's budget bounds the session: the proxy refuses calls past it, and
// at that first refusal, at the run's --max-minutes deadline (or the attempt's time limit) and on an
// interrupt the session is cancelled, then the agent's process group killed after CANCEL_GRACE_MS. What
// it leaves in the worktree is checkpointed, checked and merged by the caller exactly like ACIA's own
// Dev agent's work.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import type { ClientConnection, StopReason } from '@agentclientprotocol/sdk';
import { AciaError, errorMessage } from '../../core/errors.js';
import { BwrapRunner } from '../../core/sandbox/bwrap-runner.js';
import { killGroup, spawnHostProcess } from '../../core/contain/host-process.js';
import { writableRoots } from '../../core/contain/acia-state.js';
import { buildSandboxEnv } from '../../core/sandbox/env.js';
import { SANDBOX_PROXY_PORT } from '../../core/sandbox/egress-proxy.js';
import type { AgentOutcome } from '../../agents/agent-loop.js';
import type { DevOutput } from '../../agents/dev/dev-agent.js';
import { BudgetExceededError, type BudgetBreach } from '../budget.js';
import type { RunContext } from '../run-context.js';
import { homeSeedScript, wireAgent } from './agent-wiring.js';
import type { AcpDevAgent } from './dev-agent-choice.js';
import { startMeteringProxy, type MeteringProxy } from './metering-proxy.js';
import type { AgentApi } from './proxy-common.js';
import { Trace } from './acp-trace.js';

export type { AcpDevAgent } from './dev-agent-choice.js';

export interface AcpTaskOptions {
  agent: AcpDevAgent;
  actor: string;
  taskId: string;
  /** The task's worktree: the agent's cwd and the only place it can write. */
  root: string;
  /** The task message ACIA's own Dev agent would get. */
  task: string;
}

/**
 * How an external agent's attempt ended: as ACIA's own agent's can, or asking for authentication, which
 * no retry mends (the task fails once, and a human is asked).
 */
export type AcpOutcome = AgentOutcome<DevOutput> | { kind: 'auth_required'; turns: number; message: string };

/** After session/cancel (at the deadline or the time limit), how long the agent has to end its turn before it is killed. */
export const CANCEL_GRACE_MS = 5_000;
/** After SIGTERM, how long before SIGKILL. */
const KILL_GRACE_MS = 2_000;

const API_NAMES: Record<AgentApi, string> = { anthropic: 'Anthropic Messages API', openai: 'OpenAI Responses API', gemini: 'Gemini API' };
/** ACP's "authentication required" error code. */
const AUTH_REQUIRED = -32000;

type StopCause = 'deadline' | 'time_limit' | 'interrupt' | 'budget';

/**
 * An external agent started for one attempt: its process spawned, then `initialize` and `session/new`
 * sent (or under way), no prompt yet. Booting is most of what an agent costs before its first model call
 * (Claude Code's adapter starts a CLI of its own for each session: seconds of CPU), and it needs only the
 * worktree, so callers start it as soon as that exists and send the task once it is written (best-of-N
 * boots its candidates while the task's own worktree, checks and setup are prepared). Nothing is recorded
 * and no model is called before the prompt.
 */
export interface BootedAcpAgent {
  /** Sends the task; resolves to how the session ended. The agent is stopped afterwards, whatever happened. */
  prompt(task: string): Promise<AcpOutcome>;
  /** Stops the agent (its whole process group) and its proxy; the only call needed when no prompt comes. Idempotent. */
  close(): Promise<void>;
}

export type AcpBootOptions = Omit<AcpTaskOptions, 'task'>;

/** Runs one attempt; returns how the agent's session ended, like ACIA's own agent loop does. */
export async function runAcpDevAgent(ctx: RunContext, o: AcpTaskOptions): Promise<AcpOutcome> {
  return bootAcpDevAgent(ctx, o).prompt(o.task);
}

/** Starts an agent for an attempt. Throws at once when ACIA has no key to forward its model calls with, or the run's deadline has passed. */
export function bootAcpDevAgent(ctx: RunContext, o: AcpBootOptions): BootedAcpAgent {
  const { name, api } = o.agent;
  const endpoint = ctx.deps.model.endpoints[api];
  if (!endpoint?.apiKey) {
    throw new AciaError('LLM_AUTH', `the external agent ${name} speaks the ${API_NAMES[api]}: ACIA forwards its model calls with your ${endpoint?.keyVar ?? keyVarOf(api)}, which is not set`, {
      hint: `set ${endpoint?.keyVar ?? keyVarOf(api)} for ACIA (the agent itself only ever gets a per-task key)`,
    });
  }
  // Minutes bound every session: none starts past the run's deadline (checked again at the prompt).
  const late = minutesPassed(ctx);
  if (late) throw new BudgetExceededError(late);
  return new AgentSession(ctx, o, { baseURL: endpoint.baseURL, apiKey: endpoint.apiKey });
}

class AgentSession implements BootedAcpAgent {
  private readonly runner: ReturnType<RunContext['deps']['tools']['runnerFor']>;
  private readonly sandboxed: boolean;
  private readonly trace: Trace;
  private readonly stderr: string[] = [];
  private proxy: MeteringProxy | null = null;
  private child: ChildProcess | null = null;
  private home: string | null = null;
  private conn: ClientConnection | null = null;
  private stop: SessionStop | null = null;
  private offered = '';
  private closing = false;
  private ending: Promise<void> | null = null;
  private readonly exit = deferred<number | null>();
  /** The proxy started and the process spawned (or failed to). */
  private readonly launched: Promise<ClientConnection>;
  /** `initialize` and `session/new` answered. */
  private readonly ready: Promise<string>;

  constructor(
    private readonly ctx: RunContext,
    private readonly o: AcpBootOptions,
    private readonly upstream: { baseURL: string; apiKey: string },
  ) {
    this.runner = ctx.deps.tools.runnerFor(o.root);
    this.sandboxed = this.runner instanceof BwrapRunner;
    this.trace = new Trace(ctx, o, this.runner instanceof BwrapRunner ? this.runner.pathInside(o.root) : undefined);
    this.launched = this.launch();
    this.ready = this.launched.then((conn) => this.handshake(conn));
    // Seen by prompt(); an attempt that never prompts only closes.
    this.ready.catch(() => undefined);
  }

  private async launch(): Promise<ClientConnection> {
    const { ctx, o } = this;
    // Loaded here: the ACP SDK (and its generated schemas) is only needed by runs with an external agent.
    const { client, ndJsonStream } = await import('@agentclientprotocol/sdk');
    // A sandboxed agent reaches the proxy through its socket only: no port on the host for anyone else.
    const proxy = await startMeteringProxy(ctx, { api: o.agent.api, actor: o.actor, taskId: o.taskId, upstream: this.upstream.baseURL, apiKey: this.upstream.apiKey, callerPrefix: `acp:${o.agent.name}:`, tcp: !this.sandboxed, allow: ctx.deps.config.meteringProxy, onBreach: () => this.stop?.budgetSpent() });
    this.proxy = proxy;
    if (this.closing) throw new AciaError('ABORTED', 'the attempt ended before its agent started');
    const runner = this.runner instanceof BwrapRunner ? this.runner : null;
    this.home = runner ? null : mkdtempSync(join(tmpdir(), 'acia-agent-home-'));
    const child = spawnAgent(o, proxy, runner, this.home);
    this.child = child;
    child.stderr?.on('data', (d: Buffer) => {
      this.stderr.push(d.toString());
      if (this.stderr.length > 50) this.stderr.shift();
    });
    child.once('exit', (code) => this.exit.resolve(code));
    const stream = ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>);
    this.conn = client()
      .onNotification('session/update', ({ params }) => this.trace.update(params))
      .onRequest('session/request_permission', ({ params }) => this.trace.permission(params))
      .connect(stream);
    return this.conn;
  }

  private async handshake(conn: ClientConnection): Promise<string> {
    const { PROTOCOL_VERSION } = await import('@agentclientprotocol/sdk');
    const init = await conn.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false } });
    this.offered = (init.authMethods ?? []).map((m) => m.name).join(', ');
    // Sandboxed, the worktree is at the checkout's own path (core/sandbox/task-view.ts).
    const cwd = this.runner instanceof BwrapRunner ? this.runner.pathInside(this.o.root) : this.o.root;
    const { sessionId } = await conn.agent.request('session/new', { cwd, mcpServers: [] });
    return sessionId;
  }

  async prompt(task: string): Promise<AcpOutcome> {
    const { ctx, o } = this;
    const stop = new SessionStop(ctx, () => this.child);
    this.stop = stop;
    try {
      const late = minutesPassed(ctx);
      if (late) throw new BudgetExceededError(late);
      const talk = async (): Promise<StopReason> => {
        const sessionId = await this.ready;
        const conn = this.conn!;
        stop.onCancel(() => void conn.agent.notify('session/cancel', { sessionId }).catch(() => undefined));
        const r = await conn.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: task }] });
        return r.stopReason;
      };
      // The connection does not end when the process does: a dead agent ends the session here.
      const reason = await Promise.race([
        talk(),
        this.exit.promise.then((code): never => {
          throw new AciaError('LLM_PROTOCOL', `the agent process exited (${code ?? 'signal'}) during the task`);
        }),
      ]);
      await this.trace.flush();
      return this.ended(null) ?? outcomeOf(reason, this.trace.text(), this.calls());
    } catch (e) {
      await this.trace.flush();
      const known = this.ended(e);
      if (known) return known;
      if (e instanceof BudgetExceededError || (e instanceof AciaError && (e.code === 'ABORTED' || e.code === 'LLM_AUTH'))) throw e;
      const tail = this.stderr.join('').trim().split('\n').slice(-3).join(' | ');
      return { kind: 'protocol_error', turns: this.calls(), message: `${o.agent.name}: ${errorMessage(e)}${tail ? ` (stderr: ${tail})` : ''}` };
    } finally {
      await this.close();
    }
  }

  close(): Promise<void> {
    this.ending ??= this.end();
    return this.ending;
  }

  private async end(): Promise<void> {
    this.closing = true;
    await this.launched.catch(() => undefined);
    this.stop?.dispose();
    const child = this.child;
    if (child !== null) {
      killGroup(child, 'SIGTERM');
      const killer = setTimeout(() => killGroup(child, 'SIGKILL'), KILL_GRACE_MS);
      await this.exit.promise;
      clearTimeout(killer);
      // Whatever the agent left running in its group (a shell it started) goes with it.
      killGroup(child, 'SIGKILL');
    }
    // Requests still waiting on a dead agent (a boot never prompted) fail now instead of hanging.
    this.conn?.close();
    await this.proxy?.close();
    if (this.home !== null) rmSync(this.home, { recursive: true, force: true });
  }

  private calls(): number {
    return this.proxy?.calls() ?? 0;
  }

  private ended(e: unknown): AcpOutcome | null {
    return endedBy(this.ctx, this.o, this.proxy, this.stop, this.offered, e);
  }
}

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Why a session ended that is not the agent's to report, checked in order: the budget (a refused call,
 * the run's deadline), an interrupt, the attempt's time limit, the user's key refused upstream, the agent
 * asking for authentication. Throws the stop errors; returns the outcome for the others, or null.
 */
function endedBy(ctx: RunContext, o: AcpBootOptions, proxy: MeteringProxy | null, stop: SessionStop | null, offered: string, e: unknown): AcpOutcome | null {
  const { name, api } = o.agent;
  const breach = proxy?.breach();
  if (breach) throw new BudgetExceededError(breach);
  if (stop?.cause === 'deadline') throw new BudgetExceededError(minutesPassed(ctx) ?? { limit: 'minutes', spent: ctx.deps.config.budget.maxMinutes ?? 0, max: ctx.deps.config.budget.maxMinutes ?? 0 });
  if (stop?.cause === 'interrupt' || ctx.deps.runtime.signal.aborted) throw new AciaError('ABORTED', 'interrupted');
  if (stop?.cause === 'time_limit') return { kind: 'protocol_error', turns: proxy?.calls() ?? 0, message: `${name} did not finish within ${Math.round(stop.limitMs / 1000)} s (cancelled, then stopped)` };
  if (proxy === null) return null;
  const refused = proxy.keyRefused();
  const keyVar = ctx.deps.model.endpoints[api]?.keyVar ?? keyVarOf(api);
  if (refused !== null) throw new AciaError('LLM_AUTH', `the ${API_NAMES[api]} refused your ${keyVar} (HTTP ${refused}) for the external agent ${name}'s model calls`, { hint: `check ${keyVar}` });
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  // Either it says so (ACP's -32000), or it never got one model call through because it never presented the key.
  if (code === AUTH_REQUIRED || (proxy.calls() === 0 && proxy.tokenRefusals() > 0)) {
    const said = code === AUTH_REQUIRED ? errorMessage(e) : 'it never presented the key ACIA gave it';
    return {
      kind: 'auth_required',
      turns: proxy.calls(),
      message:
        `the external agent ${name} asks for authentication (${said}). ACIA gives it a per-task key for the ${API_NAMES[api]} through its proxy (${wiredVars(api)}); ` +
        `if ${name} speaks another model API, set "api" in devAgents.${name} ("anthropic", "openai" or "gemini")${offered ? `; it offers: ${offered}` : ''}`,
    };
  }
  return null;
}

/** The run's --max-minutes deadline has passed: the breach, else null. A waived budget has none. */
function minutesPassed(ctx: RunContext): BudgetBreach | null {
  const max = ctx.deps.config.budget.maxMinutes;
  if (max === undefined || ctx.state.budgetWaived) return null;
  const spent = (ctx.deps.runtime.clock.now().getTime() - ctx.sessionStartMs) / 60_000;
  return spent >= max ? { limit: 'minutes', spent, max } : null;
}

/**
 * Ends a session at the run's deadline, the attempt's time limit, an interrupt (Ctrl-C, `acia cancel`) or
 * the first call the proxy refused for the budget, whichever comes first:
 * session/cancel, then, if the agent has not ended its turn within CANCEL_GRACE_MS, SIGTERM to its whole
 * process group (SIGKILL after KILL_GRACE_MS, in the worker's cleanup).
 */
class SessionStop {
  cause: StopCause | null = null;
  readonly limitMs: number;
  private cancel: () => void = () => undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly onAbort = () => this.stop('interrupt');

  constructor(
    private readonly ctx: RunContext,
    private readonly child: () => ChildProcess | null,
  ) {
    this.limitMs = ctx.deps.config.commandTimeoutS * 1000 * 6;
    const max = ctx.state.budgetWaived ? undefined : ctx.deps.config.budget.maxMinutes;
    const toDeadline = max === undefined ? Infinity : ctx.sessionStartMs + max * 60_000 - ctx.deps.runtime.clock.now().getTime();
    const cause: StopCause = toDeadline <= this.limitMs ? 'deadline' : 'time_limit';
    this.timers.push(setTimeout(() => this.stop(cause), Math.max(0, Math.min(toDeadline, this.limitMs))));
    // A listener added to an aborted signal never hears of it: an interrupt that came first stops the session at once.
    if (ctx.deps.runtime.signal.aborted) this.stop('interrupt');
    else ctx.deps.runtime.signal.addEventListener('abort', this.onAbort, { once: true });
  }

  /** The metering proxy refused a call for the budget: the session ends now, whatever the agent would do about it (retry, wait). */
  budgetSpent(): void {
    this.stop('budget');
  }

  /** What cancelling the session means once one exists; sent at once if the stop came first. */
  onCancel(cancel: () => void): void {
    this.cancel = cancel;
    if (this.cause !== null) cancel();
  }

  private stop(cause: StopCause): void {
    if (this.cause !== null) return;
    this.cause = cause;
    this.cancel();
    this.timers.push(
      setTimeout(() => {
        const child = this.child();
        if (child !== null) killGroup(child, 'SIGTERM');
      }, CANCEL_GRACE_MS),
    );
  }

  dispose(): void {
    for (const t of this.timers) clearTimeout(t);
    this.ctx.deps.runtime.signal.removeEventListener('abort', this.onAbort);
  }
}

function outcomeOf(stop: StopReason, text: string, turns: number): AgentOutcome<DevOutput> {
  const summary = text.trim() || 'the external agent finished without a summary';
  switch (stop) {
    case 'end_turn':
      return { kind: 'returned', result: { summary }, turns };
    case 'refusal':
      return { kind: 'refused', turns, message: summary.slice(0, 300) };
    case 'max_tokens':
    case 'max_turn_requests':
      return { kind: 'max_turns', turns, message: `the agent stopped: ${stop}` };
    case 'cancelled':
      return { kind: 'protocol_error', turns, message: 'the agent session was cancelled' };
  }
}

function keyVarOf(api: AgentApi): string {
  return { anthropic: 'ANTHROPIC_API_KEY', openai: 'OPENAI_API_KEY', gemini: 'GEMINI_API_KEY' }[api];
}

/** The variables ACIA sets for an agent of this API, for the message when it still asks to log in. */
function wiredVars(api: AgentApi): string {
  return Object.keys(wireAgent(api, { proxyUrl: '', token: '', home: '', sandboxed: true }).env).join(', ');
}

/**
 * The agent process: sandboxed like every agent command when the run's sandbox is on, with a private
 * HOME (the sandbox's own tmpfs, or `home` on the host) holding only what its wiring writes there.
 */
function spawnAgent(o: AcpBootOptions, proxy: MeteringProxy, sandbox: BwrapRunner | null, home: string | null): ChildProcess {
  const agentHome = home ?? sandbox?.homePath() ?? '/tmp';
  const env = buildSandboxEnv({ home: agentHome }, process.env);
  const proxyUrl = sandbox ? `http://127.0.0.1:${SANDBOX_PROXY_PORT}` : (proxy.url ?? '');
  const wiring = wireAgent(o.agent.api, { proxyUrl, token: proxy.token, home: agentHome, sandboxed: sandbox !== null });
  // Set after the scrub on purpose: the URL is ACIA's proxy and the key this task's token; the user's key stays in ACIA.
  Object.assign(env, wiring.env, wiring.switches);
  const seed = homeSeedScript(wiring.home);
  const command = seed ? `${seed}\n${o.agent.command}` : o.agent.command;
  const argv = sandbox ? sandbox.argv(command, o.root, { dir: proxy.socketDir }) : ['/bin/sh', '-c', command];
  // Through the containment module: an empty private directory as its cwd and search paths without the
  // worktree or checkout (an unsandboxed agent must not pick up a `node_modules` or `x.py` an agent wrote);
  // the worktree reaches it as session/new's cwd. Its own process group: a stop ends what it started too.
  return spawnHostProcess({ command: argv[0]!, args: argv.slice(1), env, writable: writableRoots(o.root), what: `ACP agent ${o.agent.name}` }, ['pipe', 'pipe', 'pipe'], { group: true });
}
