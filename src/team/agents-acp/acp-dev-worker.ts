// A Dev task attempt done by an external ACP agent (Claude Code through its ACP adapter, Codex,
// Gemini CLI, ...) instead of ACIA's own Dev agent. The agent runs in the task's worktree inside the
// same sandbox as every agent command, with no network but ACIA's metering proxy for its model; its
// permission requests are answered by policy and recorded; its tool calls and replies are recorded
// as the task's trace. What it leaves in the worktree is checkpointed, checked and merged by the
// caller exactly like ACIA's own Dev agent's work.
import type { ChildProcess } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import type { RequestPermissionRequest, RequestPermissionResponse, SessionNotification, StopReason } from '@agentclientprotocol/sdk';
import { AciaError, errorMessage } from '../../core/errors.js';
import { BwrapRunner } from '../../core/sandbox/bwrap-runner.js';
import { spawnHostProcess } from '../../core/contain/host-process.js';
import { writableRoots } from '../../core/contain/acia-state.js';
import { buildSandboxEnv } from '../../core/sandbox/env.js';
import { matchesProtected } from '../../core/policy/policy.js';
import { SANDBOX_PROXY_PORT } from '../../core/sandbox/egress-proxy.js';
import type { AgentOutcome } from '../../agents/agent-loop.js';
import type { DevOutput } from '../../agents/dev/dev-agent.js';
import { BudgetExceededError } from '../budget.js';
import type { RunContext } from '../run-context.js';
import { startMeteringProxy, type MeteringProxy } from './metering-proxy.js';

export interface AcpDevAgent {
  /** The name the config gives it (`claude-code`), recorded with its work. */
  name: string;
  /** Its command line, run with /bin/sh -c in the worktree. */
  command: string;
}

export interface AcpTaskOptions {
  agent: AcpDevAgent;
  actor: string;
  taskId: string;
  /** The task's worktree: the agent's cwd and the only place it can write. */
  root: string;
  /** The task message ACIA's own Dev agent would get. */
  task: string;
}


/** Runs one attempt; returns how the agent's session ended, like ACIA's own agent loop does. */
export async function runAcpDevAgent(ctx: RunContext, o: AcpTaskOptions): Promise<AgentOutcome<DevOutput>> {
  const upstream = ctx.deps.model.endpoint.baseURL;
  const apiKey = ctx.deps.model.endpoint.apiKey;
  if (!apiKey) throw new AciaError('LLM_AUTH', `the external agent ${o.agent.name} needs ANTHROPIC_API_KEY for its model, which is not set`);
  const runner = ctx.deps.tools.runnerFor(o.root);
  const sandboxed = runner instanceof BwrapRunner;
  // A sandboxed agent reaches the proxy through its socket only: no port on the host for anyone else.
  const proxy = await startMeteringProxy(ctx, { actor: o.actor, taskId: o.taskId, upstream, apiKey, callerPrefix: `acp:${o.agent.name}:`, tcp: !sandboxed, allow: ctx.deps.config.meteringProxy });
  const child = spawnAgent(ctx, o, proxy, sandboxed ? runner : null);
  const stderr: string[] = [];
  child.stderr?.on('data', (d: Buffer) => {
    stderr.push(d.toString());
    if (stderr.length > 50) stderr.shift();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const trace = new Trace(ctx, o, sandboxed ? runner.pathInside(o.root) : undefined);
  const timeoutMs = ctx.deps.config.commandTimeoutS * 1000 * 6;
  try {
    // Loaded here: the ACP SDK (and its generated schemas) is only needed by runs with an external agent.
    const { client, ndJsonStream, PROTOCOL_VERSION } = await import('@agentclientprotocol/sdk');
    const stream = ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>);
    const app = client()
      .onNotification('session/update', ({ params }) => trace.update(params))
      .onRequest('session/request_permission', ({ params }) => trace.permission(params));
    const stop = await app.connectWith(stream, async (agent) => {
      await agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false } });
      // Sandboxed, the worktree is at the checkout's own path (core/sandbox/task-view.ts).
      const { sessionId } = await agent.request('session/new', { cwd: sandboxed ? runner.pathInside(o.root) : o.root, mcpServers: [] });
      const onAbort = () => void agent.notify('session/cancel', { sessionId });
      ctx.deps.runtime.signal.addEventListener('abort', onAbort, { once: true });
      const timer = setTimeout(onAbort, timeoutMs);
      try {
        const r = await Promise.race([
          agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: o.task }] }),
          exited.then((code) => {
            throw new AciaError('LLM_PROTOCOL', `the agent process exited (${code ?? 'signal'}) during the task`);
          }),
        ]);
        return r.stopReason;
      } finally {
        clearTimeout(timer);
        ctx.deps.runtime.signal.removeEventListener('abort', onAbort);
      }
    });
    await trace.flush();
    const breach = proxy.breach();
    if (breach) throw new BudgetExceededError(breach);
    if (ctx.deps.runtime.signal.aborted) throw new AciaError('ABORTED', 'interrupted');
    return outcomeOf(stop, trace.text(), proxy.calls());
  } catch (e) {
    await trace.flush();
    if (e instanceof BudgetExceededError || (e instanceof AciaError && (e.code === 'ABORTED' || e.code === 'LLM_AUTH'))) throw e;
    const breach = proxy.breach();
    if (breach) throw new BudgetExceededError(breach);
    const tail = stderr.join('').trim().split('\n').slice(-3).join(' | ');
    return { kind: 'protocol_error', turns: proxy.calls(), message: `${o.agent.name}: ${errorMessage(e)}${tail ? ` (stderr: ${tail})` : ''}` };
  } finally {
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 2000);
    await exited;
    clearTimeout(killer);
    await proxy.close();
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
      return { kind: 'protocol_error', turns, message: 'the agent session was cancelled (time limit)' };
  }
}

/** The agent process: sandboxed like every agent command when the run's sandbox is on. */
function spawnAgent(ctx: RunContext, o: AcpTaskOptions, proxy: MeteringProxy, sandbox: BwrapRunner | null): ChildProcess {
  const parentEnv = process.env;
  const env = buildSandboxEnv({ home: sandbox ? sandbox.homePath() : (parentEnv.HOME ?? '/tmp') }, parentEnv);
  // Set after the scrub on purpose: the URL is ACIA's proxy and the key this task's token; the user's key
  // stays in ACIA. IS_SANDBOX lets Claude Code's adapter run as root, which it is only inside bwrap.
  env.ANTHROPIC_BASE_URL = sandbox ? `http://127.0.0.1:${SANDBOX_PROXY_PORT}` : (proxy.url ?? '');
  env.ANTHROPIC_API_KEY = proxy.token;
  if (sandbox) env.IS_SANDBOX = '1';
  const argv = sandbox ? sandbox.argv(o.agent.command, o.root, { dir: proxy.socketDir }) : ['/bin/sh', '-c', o.agent.command];
  // Through the containment module: an empty private directory as its cwd and search paths without the
  // worktree or checkout (an unsandboxed agent must not pick up a `node_modules` or `x.py` an agent wrote);
  // the worktree reaches it as session/new's cwd.
  return spawnHostProcess({ command: argv[0]!, args: argv.slice(1), env, writable: writableRoots(o.root), what: `ACP agent ${o.agent.name}` }, ['pipe', 'pipe', 'pipe']);
}

/** Records the agent's updates as the task's trace, and answers its permission requests by policy. */
class Trace {
  private readonly chunks: string[] = [];
  private readonly open = new Map<string, { title: string; kind: string; rawInput: unknown; locations: string[] }>();
  private pending: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly ctx: RunContext,
    private readonly o: AcpTaskOptions,
    /** The worktree's path as the sandboxed agent sees it, when that differs. */
    private readonly inside?: string,
  ) {}

  text(): string {
    return this.chunks.join('');
  }

  flush(): Promise<unknown> {
    return this.pending.catch(() => undefined);
  }

  update(n: SessionNotification): void {
    const u = n.update;
    const { ctx, o } = this;
    if (u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text') {
      this.chunks.push(u.content.text);
      return;
    }
    if (u.sessionUpdate !== 'tool_call' && u.sessionUpdate !== 'tool_call_update') return;
    // A call arrives in pieces (announced, filled in, finished); it is recorded once, when it ends.
    const call = this.open.get(u.toolCallId) ?? { title: '', kind: 'other', rawInput: null, locations: [] };
    if (u.title) call.title = u.title;
    if (u.kind) call.kind = u.kind;
    if (u.rawInput !== undefined && !isEmpty(u.rawInput)) call.rawInput = u.rawInput;
    if (u.locations && u.locations.length > 0) call.locations = u.locations.map((l) => l.path);
    this.open.set(u.toolCallId, call);
    if (u.sessionUpdate !== 'tool_call_update' || (u.status !== 'completed' && u.status !== 'failed')) return;
    this.open.delete(u.toolCallId);
    const shown = (u.content ?? []).map((c) => (c.type === 'content' && c.content.type === 'text' ? c.content.text : c.type === 'diff' ? `--- ${c.path}\n${c.newText}` : `[${c.type}]`)).join('\n');
    const output = shown || (typeof u.rawOutput === 'string' ? u.rawOutput : JSON.stringify(u.rawOutput ?? call.title));
    const name = `${o.agent.name}:${call.kind}`;
    const ok = u.status === 'completed';
    this.chain(async () => {
      await ctx.rec.record(o.actor, 'TOOL_CALL', { taskId: o.taskId, toolUseId: u.toolCallId, name, input: call });
      const outputRef = await ctx.rec.blob(output);
      return ctx.rec.record(o.actor, 'TOOL_RESULT', { taskId: o.taskId, toolUseId: u.toolCallId, name, ok, outputRef, durationMs: 0 });
    });
  }

  /** Allowed unless the call names a protected path; the decision is recorded like every policy answer. */
  async permission(p: RequestPermissionRequest): Promise<RequestPermissionResponse> {
    const { ctx, o } = this;
    const roots = [o.root, this.inside].filter((r): r is string => r !== undefined);
    const paths = (p.toolCall.locations ?? []).map((l) => {
      const root = roots.find((r) => l.path.startsWith(`${r}/`));
      return root === undefined ? l.path : l.path.slice(root.length + 1);
    });
    const hit = paths.find((f) => ctx.deps.config.protectedPaths.some((pat) => matchesProtected(f, pat)));
    const allow = hit === undefined;
    const reason = allow ? undefined : `${hit} is a protected path`;
    const request = { agent: o.agent.name, task: { id: o.taskId }, toolCall: { title: p.toolCall.title ?? null, kind: p.toolCall.kind ?? null, paths }, options: p.options.map((x) => x.optionId) };
    this.chain(() => ctx.rec.record('policy', 'POLICY_DECISION', { hook: 'agent.permission', taskId: o.taskId, request, response: { allow, ...(reason ? { reason } : {}) } }));
    await this.flush();
    const want = allow ? ['allow_once', 'allow_always'] : ['reject_once', 'reject_always'];
    const option = p.options.find((x) => x.kind === want[0]) ?? p.options.find((x) => x.kind === want[1]);
    return option ? { outcome: { outcome: 'selected', optionId: option.optionId } } : { outcome: { outcome: 'cancelled' } };
  }

  private chain(step: () => Promise<unknown>): void {
    this.pending = this.pending.then(step, step);
  }
}

function isEmpty(v: unknown): boolean {
  return typeof v === 'object' && v !== null && Object.keys(v).length === 0;
}
