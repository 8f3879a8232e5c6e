// A Dev task attempt done by an external ACP agent (Claude Code, Codex, Gemini CLI, ...) instead of
// ACIA's own Dev agent. The agent runs in the task's worktree inside the same sandbox as every agent
// command, with a private temporary HOME and no network but ACIA's metering proxy for its model, in the
// model API it speaks; its permission requests are answered by policy and its tool calls recorded as the
// task's trace (acp-trace.ts). The run's budget bounds the session: the proxy refuses calls past it, and
// at the run's --max-minutes deadline (or the attempt's time limit) the session is cancelled, then the
// agent killed after CANCEL_GRACE_MS. What it leaves in the worktree is checkpointed, checked and merged
// by the caller exactly like ACIA's own Dev agent's work.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import type { StopReason } from '@agentclientprotocol/sdk';
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

type StopCause = 'deadline' | 'time_limit' | 'interrupt';

/** Runs one attempt; returns how the agent's session ended, like ACIA's own agent loop does. */
export async function runAcpDevAgent(ctx: RunContext, o: AcpTaskOptions): Promise<AcpOutcome> {
  const { name, api } = o.agent;
  const endpoint = ctx.deps.model.endpoints[api];
  if (!endpoint?.apiKey) {
    throw new AciaError('LLM_AUTH', `the external agent ${name} speaks the ${API_NAMES[api]}: ACIA forwards its model calls with your ${endpoint?.keyVar ?? keyVarOf(api)}, which is not set`, {
      hint: `set ${endpoint?.keyVar ?? keyVarOf(api)} for ACIA (the agent itself only ever gets a per-task key)`,
    });
  }
  // Minutes bound every session: none starts past the run's deadline.
  const late = minutesPassed(ctx);
  if (late) throw new BudgetExceededError(late);
  const runner = ctx.deps.tools.runnerFor(o.root);
  const sandboxed = runner instanceof BwrapRunner;
  // A sandboxed agent reaches the proxy through its socket only: no port on the host for anyone else.
  const proxy = await startMeteringProxy(ctx, { api, actor: o.actor, taskId: o.taskId, upstream: endpoint.baseURL, apiKey: endpoint.apiKey, callerPrefix: `acp:${name}:`, tcp: !sandboxed, allow: ctx.deps.config.meteringProxy });
  const home = sandboxed ? null : mkdtempSync(join(tmpdir(), 'acia-agent-home-'));
  const child = spawnAgent(o, proxy, sandboxed ? runner : null, home);
  const stderr: string[] = [];
  child.stderr?.on('data', (d: Buffer) => {
    stderr.push(d.toString());
    if (stderr.length > 50) stderr.shift();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const trace = new Trace(ctx, o, sandboxed ? runner.pathInside(o.root) : undefined);
  const stop = new SessionStop(ctx, child);
  let offered = '';
  try {
    // Loaded here: the ACP SDK (and its generated schemas) is only needed by runs with an external agent.
    const { client, ndJsonStream, PROTOCOL_VERSION } = await import('@agentclientprotocol/sdk');
    const stream = ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>);
    const app = client()
      .onNotification('session/update', ({ params }) => trace.update(params))
      .onRequest('session/request_permission', ({ params }) => trace.permission(params));
    const session = app.connectWith(stream, async (agent) => {
      const init = await agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false } });
      offered = (init.authMethods ?? []).map((m) => m.name).join(', ');
      // Sandboxed, the worktree is at the checkout's own path (core/sandbox/task-view.ts).
      const { sessionId } = await agent.request('session/new', { cwd: sandboxed ? runner.pathInside(o.root) : o.root, mcpServers: [] });
      stop.onCancel(() => void agent.notify('session/cancel', { sessionId }).catch(() => undefined));
      const r = await agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: o.task }] });
      return r.stopReason;
    });
    // The connection does not end when the process does: a dead agent ends the session here.
    const reason = await Promise.race([
      session,
      exited.then((code): never => {
        throw new AciaError('LLM_PROTOCOL', `the agent process exited (${code ?? 'signal'}) during the task`);
      }),
    ]);
    await trace.flush();
    return ended(ctx, o, proxy, stop, offered, null) ?? outcomeOf(reason, trace.text(), proxy.calls());
  } catch (e) {
    await trace.flush();
    const known = ended(ctx, o, proxy, stop, offered, e);
    if (known) return known;
    if (e instanceof BudgetExceededError || (e instanceof AciaError && (e.code === 'ABORTED' || e.code === 'LLM_AUTH'))) throw e;
    const tail = stderr.join('').trim().split('\n').slice(-3).join(' | ');
    return { kind: 'protocol_error', turns: proxy.calls(), message: `${name}: ${errorMessage(e)}${tail ? ` (stderr: ${tail})` : ''}` };
  } finally {
    stop.dispose();
    killGroup(child, 'SIGTERM');
    const killer = setTimeout(() => killGroup(child, 'SIGKILL'), KILL_GRACE_MS);
    await exited;
    clearTimeout(killer);
    // Whatever the agent left running in its group (a shell it started) goes with it.
    killGroup(child, 'SIGKILL');
    await proxy.close();
    if (home !== null) rmSync(home, { recursive: true, force: true });
  }
}

/**
 * Why a session ended that is not the agent's to report, checked in order: the budget (a refused call,
 * the run's deadline), an interrupt, the attempt's time limit, the user's key refused upstream, the agent
 * asking for authentication. Throws the stop errors; returns the outcome for the others, or null.
 */
function ended(ctx: RunContext, o: AcpTaskOptions, proxy: MeteringProxy, stop: SessionStop, offered: string, e: unknown): AcpOutcome | null {
  const { name, api } = o.agent;
  const breach = proxy.breach();
  if (breach) throw new BudgetExceededError(breach);
  if (stop.cause === 'deadline') throw new BudgetExceededError(minutesPassed(ctx) ?? { limit: 'minutes', spent: ctx.deps.config.budget.maxMinutes ?? 0, max: ctx.deps.config.budget.maxMinutes ?? 0 });
  if (stop.cause === 'interrupt' || ctx.deps.runtime.signal.aborted) throw new AciaError('ABORTED', 'interrupted');
  if (stop.cause === 'time_limit') return { kind: 'protocol_error', turns: proxy.calls(), message: `${name} did not finish within ${Math.round(stop.limitMs / 1000)} s (cancelled, then stopped)` };
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
 * Ends a session at the run's deadline, the attempt's time limit or an interrupt, whichever comes first:
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
    private readonly child: ChildProcess,
  ) {
    this.limitMs = ctx.deps.config.commandTimeoutS * 1000 * 6;
    const max = ctx.state.budgetWaived ? undefined : ctx.deps.config.budget.maxMinutes;
    const toDeadline = max === undefined ? Infinity : ctx.sessionStartMs + max * 60_000 - ctx.deps.runtime.clock.now().getTime();
    const cause: StopCause = toDeadline <= this.limitMs ? 'deadline' : 'time_limit';
    this.timers.push(setTimeout(() => this.stop(cause), Math.max(0, Math.min(toDeadline, this.limitMs))));
    ctx.deps.runtime.signal.addEventListener('abort', this.onAbort, { once: true });
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
    this.timers.push(setTimeout(() => killGroup(this.child, 'SIGTERM'), CANCEL_GRACE_MS));
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
  return Object.keys(wireAgent(api, { proxyUrl: '', token: '', home: '', sandboxed: true }).env).filter((k) => k !== 'IS_SANDBOX').join(', ');
}

/**
 * The agent process: sandboxed like every agent command when the run's sandbox is on, with a private
 * HOME (the sandbox's own tmpfs, or `home` on the host) holding only what its wiring writes there.
 */
function spawnAgent(o: AcpTaskOptions, proxy: MeteringProxy, sandbox: BwrapRunner | null, home: string | null): ChildProcess {
  const agentHome = home ?? sandbox?.homePath() ?? '/tmp';
  const env = buildSandboxEnv({ home: agentHome }, process.env);
  const proxyUrl = sandbox ? `http://127.0.0.1:${SANDBOX_PROXY_PORT}` : (proxy.url ?? '');
  const wiring = wireAgent(o.agent.api, { proxyUrl, token: proxy.token, home: agentHome, sandboxed: sandbox !== null });
  // Set after the scrub on purpose: the URL is ACIA's proxy and the key this task's token; the user's key stays in ACIA.
  Object.assign(env, wiring.env);
  const seed = homeSeedScript(wiring.home);
  const command = seed ? `${seed}\n${o.agent.command}` : o.agent.command;
  const argv = sandbox ? sandbox.argv(command, o.root, { dir: proxy.socketDir }) : ['/bin/sh', '-c', command];
  // Through the containment module: an empty private directory as its cwd and search paths without the
  // worktree or checkout (an unsandboxed agent must not pick up a `node_modules` or `x.py` an agent wrote);
  // the worktree reaches it as session/new's cwd. Its own process group: a stop ends what it started too.
  return spawnHostProcess({ command: argv[0]!, args: argv.slice(1), env, writable: writableRoots(o.root), what: `ACP agent ${o.agent.name}` }, ['pipe', 'pipe', 'pipe'], { group: true });
}
