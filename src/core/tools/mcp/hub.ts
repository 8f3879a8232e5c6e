// The live MCP side of a run: starts each configured server once per worktree it serves (stdio) or
// once per run (HTTP), lists their tools, routes calls, and stops every instance when the run ends.
import { AciaError, errorMessage, isAciaError } from '../../errors.js';
import { toolError } from '../define-tool.js';
import type { Tool, ToolContext, ToolResult } from '../types.js';
import { catalogTools, unavailableIn, type CatalogServer, type McpCatalog, type McpToolSource } from './catalog.js';
import { expandSpec, type AgentRoleName, type BlockedServer, type McpServerSpec } from './config.js';
import { startupHint } from './failure.js';
import { pathInsideView } from '../../sandbox/task-view.js';
import type { McpConnection, SandboxChoice } from './connection.js';
import { mcpTool, toToolResult } from './mcp-tool.js';

export interface McpHubOptions {
  sandbox: SandboxChoice;
  parentEnv: NodeJS.ProcessEnv;
  /** One line for the user: a server that failed to start or broke during a call. */
  warn: (line: string) => void;
  clientVersion: string;
  /** Servers defined but unusable (a trusted entry with no command): listed failed, so agents read why. */
  unusable?: readonly BlockedServer[];
  /** A server still starting after this long gets one line saying so (default 5 s). */
  slowAfterMs?: number;
}

/** A server that keeps dying is restarted this many times per worktree, then left broken. */
const MAX_RESTARTS = 2;
const SLOW_AFTER_MS = 5000;

export class McpHub implements McpToolSource {
  private readonly conns = new Map<string, Promise<McpConnection>>();
  private readonly restarts = new Map<string, number>();
  private readonly byName: Map<string, McpServerSpec>;
  private tools: { tool: Tool; roles: readonly string[]; server: string }[] = [];
  private catalog: McpCatalog | null = null;
  /** The server starts `open` stopped waiting for. */
  private pending: Promise<CatalogServer>[] | null = null;

  constructor(
    readonly servers: readonly McpServerSpec[],
    private readonly o: McpHubOptions,
  ) {
    this.byName = new Map(servers.map((s) => [s.name, s]));
  }

  async open(runRoot: string, opts: { waitMs?: number; worktreeReady?: PromiseLike<void> } = {}): Promise<McpCatalog> {
    if (this.servers.length > 0) await opts.worktreeReady;
    // All at once: one slow server (npx fetching a package) does not hold up the others.
    const starts = this.servers.map((spec) => this.describe(spec, runRoot));
    const unusable: CatalogServer[] = (this.o.unusable ?? []).map((b) => ({ name: b.name, source: b.source, transport: 'stdio', sandboxed: false, error: b.reason, tools: [] }));
    let servers: CatalogServer[];
    if (opts.waitMs === undefined) {
      servers = await Promise.all(starts);
    } else {
      const late = Symbol('late');
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<typeof late>((r) => (timer = setTimeout(() => r(late), opts.waitMs)));
      const settled = await Promise.all(starts.map((p) => Promise.race([p, deadline])));
      clearTimeout(timer);
      servers = settled.map((s, i) => (s === late ? this.pendingEntry(this.servers[i]!) : s));
      if (servers.some((s) => s.pending === true)) this.pending = starts;
    }
    return this.use({ servers: [...servers, ...unusable] });
  }

  async settle(): Promise<McpCatalog | null> {
    const pending = this.pending;
    const catalog = this.catalog;
    if (pending === null || catalog === null) return null;
    this.pending = null;
    const done = new Map((await Promise.all(pending)).map((s) => [s.name, s]));
    return this.use({ servers: catalog.servers.map((s) => (s.pending === true ? (done.get(s.name) ?? s) : s)) });
  }

  unavailable(toolName: string): string | null {
    return unavailableIn(this.catalog, toolName);
  }

  current(): McpCatalog | null {
    return this.catalog;
  }

  toolsFor(role: AgentRoleName): Tool[] {
    return this.tools.filter((t) => t.roles.includes(role)).map((t) => t.tool);
  }

  /** Starts one server in `root` and lists its tools; a failure is recorded, never thrown. */
  async describe(spec: McpServerSpec, root: string): Promise<CatalogServer> {
    const base = this.baseOf(spec);
    // Say what is slow while it is slow: a server that npx fetches first can take its whole time-out.
    const slowMs = this.o.slowAfterMs ?? SLOW_AFTER_MS;
    const slow = slowMs < spec.startupTimeoutMs ? setTimeout(() => this.o.warn(`MCP server ${spec.name} is still starting after ${slowMs / 1000} s (its start-up time-out is ${spec.startupTimeoutMs / 1000} s)`), slowMs) : undefined;
    try {
      const conn = await this.connection(spec, root);
      return { ...base, error: null, tools: catalogTools(spec, await conn.listTools()) };
    } catch (e) {
      const message = errorMessage(e);
      this.o.warn(message.startsWith('MCP server') ? message : `MCP server ${spec.name}: ${message}`);
      return { ...base, error: message, tools: [] };
    } finally {
      clearTimeout(slow);
    }
  }

  private use(catalog: McpCatalog): McpCatalog {
    this.catalog = catalog;
    this.tools = catalog.servers.flatMap((s) => s.tools.map((t) => ({ tool: mcpTool(s.name, t, (...a) => this.invoke(...a)), roles: t.roles, server: s.name })));
    return catalog;
  }

  private pendingEntry(spec: McpServerSpec): CatalogServer {
    const hint = startupHint(spec, this.sandboxed(spec));
    this.o.warn(`MCP server ${spec.name} is still starting; planning goes on without its tools, and the Dev and QA agents get them if it starts${hint ? ` (${hint})` : ''}`);
    return { ...this.baseOf(spec), error: null, pending: true, tools: [] };
  }

  private baseOf(spec: McpServerSpec): Omit<CatalogServer, 'error' | 'tools'> {
    return { name: spec.name, source: spec.source, transport: spec.transport, sandboxed: this.sandboxed(spec) };
  }

  private sandboxed(spec: McpServerSpec): boolean {
    return spec.transport === 'stdio' && spec.sandbox && this.o.sandbox === 'bwrap';
  }

  prewarm(root: string, role: AgentRoleName): void {
    const wanted = new Set(this.tools.filter((t) => t.roles.includes(role)).map((t) => t.server));
    for (const spec of this.servers) {
      // A failed start is reported by the call that needs the server, which tries again.
      if (wanted.has(spec.name)) this.connection(spec, root).catch(() => undefined);
    }
  }

  async release(root: string): Promise<void> {
    const mine = [...this.conns.entries()].filter(([key]) => key.endsWith(`\0${root}`));
    for (const [key] of mine) {
      this.conns.delete(key);
      this.restarts.delete(key);
    }
    await Promise.all(mine.map(([, p]) => p.then((c) => c.close(), () => undefined)));
  }

  async close(): Promise<void> {
    const all = [...this.conns.values()];
    this.conns.clear();
    await Promise.all(all.map((p) => p.then((c) => c.close(), () => undefined)));
  }

  private connection(spec: McpServerSpec, root: string): Promise<McpConnection> {
    const key = spec.transport === 'stdio' ? `${spec.name}\0${root}` : spec.name;
    let p = this.conns.get(key);
    if (p === undefined) {
      p = (async () => {
        // A sandboxed server sees the worktree at the checkout's own path (core/sandbox/task-view.ts).
        const inside = spec.transport === 'stdio' && spec.sandbox && this.o.sandbox === 'bwrap' ? pathInsideView(root, root) : root;
        const expanded = expandSpec(spec, { ...this.o.parentEnv, ACIA_WORKTREE: inside });
        // Loaded on the first connection: the MCP SDK (and ajv under it) costs start-up time in every run.
        const { McpConnection } = await import('./connection.js');
        return McpConnection.open(expanded, { root, sandbox: this.o.sandbox, parentEnv: this.o.parentEnv, clientVersion: this.o.clientVersion });
      })();
      this.conns.set(key, p);
      // A failed start is not cached: the next use tries again (bounded below).
      p.catch(() => this.conns.delete(key));
    }
    return p;
  }

  private async invoke(server: string, remoteName: string, input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const spec = this.byName.get(server);
    const exposed = `mcp__${server}__${remoteName}`;
    if (!spec) return toolError(`no MCP server ${server} in this run`, { errorCode: 'MCP_SERVER_FAILED' });
    const key = spec.transport === 'stdio' ? `${spec.name}\0${ctx.root}` : spec.name;
    const timeoutMs = callTimeout(spec, ctx);
    if (timeoutMs <= 0) return toolError(`${exposed} was not called: the run's time budget is spent`, { errorCode: 'BUDGET_EXCEEDED' });
    let progress = 0;
    try {
      let conn = await this.connection(spec, ctx.root);
      if (conn.broken !== null) {
        // The server died after an earlier call: start a fresh instance, a bounded number of times.
        const n = this.restarts.get(key) ?? 0;
        if (n >= MAX_RESTARTS) throw new AciaError('MCP_CALL_FAILED', `MCP server ${server} is unusable: ${conn.broken} (restarted ${n} times)`);
        this.restarts.set(key, n + 1);
        this.conns.delete(key);
        conn = await this.connection(spec, ctx.root);
      }
      const result = await conn.call(remoteName, input, {
        timeoutMs,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
        onProgress: () => {
          progress++;
        },
      });
      return toToolResult(result, exposed, { server, tool: remoteName, ...(progress > 0 ? { progressNotifications: progress } : {}) });
    } catch (e) {
      if (isAciaError(e) && e.code === 'ABORTED') throw e;
      const message = errorMessage(e);
      this.o.warn(message);
      return toolError(`${exposed} failed: ${message}`, { errorCode: isAciaError(e) ? e.code : 'MCP_CALL_FAILED', server, tool: remoteName });
    }
  }
}

/** The server's call time-out (the command time-out by default), never past the run's time budget. */
function callTimeout(spec: McpServerSpec, ctx: ToolContext): number {
  const own = spec.callTimeoutMs ?? ctx.commandTimeoutS * 1000;
  return ctx.deadlineMs === undefined ? own : Math.min(own, ctx.deadlineMs - Date.now());
}
