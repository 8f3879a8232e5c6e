// One live MCP server instance: started (in the sandbox by default) with a startup time-out, its tools
// listed, calls made with a time-out, and every way it can break turned into one clear message.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode as McpErrorCode, McpError, type CallToolResult, type Tool as McpToolDef } from '@modelcontextprotocol/sdk/types.js';
import { AciaError, errorMessage } from '../../errors.js';
import { BwrapRunner } from '../../sandbox/bwrap-runner.js';
import { hasSetpriv, hostProcess, launcherCwd } from '../../contain/host-process.js';
import { writableRoots } from '../../contain/acia-state.js';
import type { McpServerSpec } from './config.js';
import { httpFailure, startupHint, stderrSummary } from './failure.js';
import { shellQuote } from '../../text/shell-quote.js';

export type SandboxChoice = 'bwrap' | 'off';

export interface ConnectOptions {
  /** The worktree this instance serves: its cwd, and the only writable place in its sandbox. */
  root: string;
  sandbox: SandboxChoice;
  parentEnv: NodeJS.ProcessEnv;
  clientVersion: string;
}

export interface CallOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  onProgress?: (progress: number, total: number | undefined) => void;
}

const CLOSE_GRACE_MS = 500;
const EXITED = 'the server process exited';

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Keeps the last KB a server wrote to stderr: the best clue when it dies (a Node stack runs to a few KB). */
const STDERR_KEEP = 8192;

export class McpConnection {
  private failure: string | null = null;
  private stderrTail = '';
  private closed = false;
  private stdio: StdioClientTransport | null = null;
  /** Removes the private directory an unsandboxed server was started in. */
  private dispose: () => void = () => undefined;

  private constructor(
    readonly spec: McpServerSpec,
    private readonly client: Client,
  ) {}

  /** Starts the server and completes the MCP handshake, or throws MCP_SERVER_FAILED with the reason. */
  static async open(spec: McpServerSpec, o: ConnectOptions): Promise<McpConnection> {
    const client = new Client({ name: 'acia', version: o.clientVersion }, { capabilities: {} });
    const conn = new McpConnection(spec, client);
    const transport = spec.transport === 'stdio' ? await conn.stdioTransport(o) : remoteTransport(spec);
    // A line on stdout that is not JSON-RPC means the protocol stream is corrupt: stop trusting it.
    transport.onerror = (e) => conn.onTransportError(e);
    client.onclose = () => {
      conn.failure ??= spec.transport === 'stdio' ? EXITED : 'the connection closed';
    };
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        client.connect(transport, { timeout: spec.startupTimeoutMs }),
        new Promise((_r, reject) => {
          timer = setTimeout(() => reject(new StartupTimeout(spec.startupTimeoutMs)), spec.startupTimeoutMs);
        }),
      ]);
    } catch (e) {
      // An HTTP server's own answer (refused, 404, 401) names the cause; "the connection closed" that follows it does not.
      const remote = spec.transport !== 'stdio';
      const why = remote && !(e instanceof StartupTimeout) ? httpFailure(e, spec.url!) : (conn.failureText() ?? `${mcpMessage(e)}${conn.stderrNote()}`);
      await conn.close();
      const hint = e instanceof StartupTimeout ? startupHint(spec, o.sandbox === 'bwrap' && spec.sandbox) : '';
      throw new AciaError('MCP_SERVER_FAILED', `MCP server ${spec.name} did not start: ${why}${hint ? `; ${hint}` : ''}`);
    } finally {
      clearTimeout(timer);
    }
    return conn;
  }

  async listTools(): Promise<McpToolDef[]> {
    const out: McpToolDef[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.client.listTools(cursor === undefined ? {} : { cursor }, { timeout: this.spec.startupTimeoutMs });
      out.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined && out.length < 10_000);
    return out;
  }

  /** Calls a tool; a broken server, a time-out or a cancel becomes MCP_CALL_FAILED with a message for the model. */
  async call(tool: string, args: Record<string, unknown>, o: CallOptions): Promise<CallToolResult> {
    if (this.failure !== null) throw new AciaError('MCP_CALL_FAILED', `MCP server ${this.spec.name} is unusable: ${this.failureText()}`);
    try {
      const result = await this.client.callTool({ name: tool, arguments: args }, undefined, {
        timeout: o.timeoutMs,
        maxTotalTimeout: o.timeoutMs,
        ...(o.signal ? { signal: o.signal } : {}),
        ...(o.onProgress ? { onprogress: (p: { progress: number; total?: number | undefined }) => o.onProgress?.(p.progress, p.total) } : {}),
      });
      return result as CallToolResult;
    } catch (e) {
      if (o.signal?.aborted) throw new AciaError('ABORTED', `${tool} was cancelled`);
      if (e instanceof McpError && e.code === (McpErrorCode.RequestTimeout as number)) {
        throw new AciaError('MCP_CALL_FAILED', `MCP server ${this.spec.name} did not answer ${tool} within ${Math.round(o.timeoutMs / 100) / 10} s`);
      }
      const why = this.failureText() ?? mcpMessage(e);
      throw new AciaError('MCP_CALL_FAILED', `MCP server ${this.spec.name} failed during ${tool}: ${why}`);
    }
  }

  get broken(): string | null {
    return this.failureText();
  }

  /** Why the server is unusable; an exit carries what its stderr said, read when asked (it may arrive after the exit). */
  private failureText(): string | null {
    if (this.failure === EXITED) return `${EXITED}${this.stderrNote()}`;
    return this.failure;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.failure ??= 'stopped';
    // The SDK closes stdin and waits 2 s, then SIGTERM and 2 s more: a run's end (or Ctrl-C) should not
    // wait on a server that ignores both, so after a short grace it is killed.
    const pid = this.stdio?.pid ?? null;
    const killer = pid === null ? undefined : setTimeout(() => killQuietly(pid), CLOSE_GRACE_MS);
    await this.client.close().catch(() => undefined);
    clearTimeout(killer);
    this.dispose();
  }

  private onTransportError(e: Error): void {
    if (this.failure !== null) return;
    if (e instanceof SyntaxError || e.name === 'ZodError' || /JSON/.test(e.message)) {
      this.failure = `it printed something that is not MCP (JSON-RPC) on stdout: ${e.message.slice(0, 120)}`;
      // Closing rejects every pending call at once instead of letting each run into its time-out.
      void this.client.close().catch(() => undefined);
    }
  }

  private stderrNote(): string {
    const said = stderrSummary(this.stderrTail);
    return said === '' ? '' : ` (stderr: ${said})`;
  }

  private async stdioTransport(o: ConnectOptions): Promise<Transport> {
    const spec = this.spec;
    const { dispose, ...params } = await spawnParams(spec, o);
    this.dispose = dispose;
    const transport = new StdioClientTransport({ ...params, stderr: 'pipe' });
    transport.stderr?.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_KEEP);
    });
    this.stdio = transport;
    return transport;
  }
}

/**
 * How a stdio server is spawned. Sandboxed: bubblewrap with the worktree writable (and its working
 * directory inside), no network but the server's allowedHosts, and `--die-with-parent`, so a kill -9 of
 * ACIA takes the server with it. Unsandboxed (the user's opt-out): through the containment module, in an
 * empty private directory with checked search paths, the worktree given as ACIA_WORKTREE; `setpriv
 * --pdeathsig KILL` gives the same no-orphan guarantee.
 */
export async function spawnParams(spec: McpServerSpec, o: ConnectOptions): Promise<{ command: string; args: string[]; env: Record<string, string>; cwd: string; dispose: () => void }> {
  const command = spec.command!;
  if (o.sandbox === 'bwrap' && spec.sandbox) {
    const runner = new BwrapRunner({ root: o.root, allowedHosts: spec.allowedHosts, parentEnv: o.parentEnv });
    const shell = ['exec', command, ...spec.args].map(shellQuote).join(' ');
    const { argv, env } = await runner.spawnSpec(shell, o.root);
    // The server's own env is what the user configured on purpose (tokens included): passed as given.
    return { command: argv[0]!, args: argv.slice(1), env: { ...env, ...spec.env }, cwd: launcherCwd(), dispose: () => undefined };
  }
  const p = hostProcess({ command, args: spec.args, env: { ...getDefaultEnvironment(), ...spec.env, ACIA_WORKTREE: o.root }, writable: writableRoots(o.root), what: `MCP server ${spec.name}` });
  // Without util-linux (not Linux), the server still stops when its stdin closes, as most do.
  if (!hasSetpriv()) return p;
  return { ...p, command: 'setpriv', args: ['--pdeathsig', 'KILL', '--', p.command, ...p.args] };
}


/** Streamable HTTP, or the legacy HTTP+SSE transport that Claude Code configs still name (`"type": "sse"`). */
function remoteTransport(spec: McpServerSpec): Transport {
  let url: URL;
  try {
    url = new URL(spec.url!);
  } catch {
    throw new AciaError('MCP_SERVER_FAILED', `MCP server ${spec.name}: "${spec.url}" is not a URL`);
  }
  const requestInit = { headers: spec.headers };
  // The SSE transport sends these headers on the event stream's GET as well as on every POST.
  return spec.transport === 'sse' ? new SSEClientTransport(url, { requestInit }) : new StreamableHTTPClientTransport(url, { requestInit });
}

class StartupTimeout extends Error {
  constructor(ms: number) {
    super(`no MCP handshake within ${ms / 1000} s`);
  }
}


function mcpMessage(e: unknown): string {
  if (e instanceof McpError && e.code === (McpErrorCode.ConnectionClosed as number)) return 'the connection closed';
  return errorMessage(e).replace(/^MCP error -?\d+: /, '');
}
