// `acia mcp`: serves the team over stdio (one client), or over streamable HTTP on 127.0.0.1 (one MCP
// session per client, all sharing the runs). Over stdio the server lives as long as its client: when the
// client goes (stdin closes, or it stops the server), a run a call was waiting on is stopped (resumable)
// and the others, each in a process of its own, go on to their end. The HTTP server is a service the user
// started: stopping it stops its runs, recorded as interrupted and resumable.
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createAciaMcpServer } from './server.js';
import { RunsService } from './runs-service.js';
import { refusedOrigin } from './origin.js';
import { childLauncher, inProcess, type JobCommand } from './run-launch.js';

export interface ServeOptions {
  repo: string;
  env: NodeJS.ProcessEnv;
  version: string;
  /** Serve HTTP on 127.0.0.1:<port> (0: any free port) instead of stdio. */
  httpPort?: number;
  /** Where the listening address and warnings go (never stdout: in stdio mode that is the protocol). */
  log?: (line: string) => void;
  /** The bearer token HTTP clients must send; generated (and printed) when not given. */
  httpToken?: string;
  /**
   * `acia mcp run-job`'s command line: each run then runs in a child process of its own session, which
   * outlives a client that leaves. Without it runs run in this process and stop with it.
   */
  jobCommand?: JobCommand;
}

/** What a client that gives the wrong token reads: a static token, so no OAuth discovery is worth trying. */
export const WWW_AUTHENTICATE =
  'Bearer realm="acia mcp", error="invalid_token", error_description="acia mcp takes a static bearer token: the one it printed at start, or ACIA_MCP_TOKEN; it does not do OAuth"';

export async function serveMcp(o: ServeOptions): Promise<void> {
  const log = o.log ?? ((line: string) => process.stderr.write(`acia mcp: ${line}\n`));
  const service = new RunsService(o.repo, o.env, (w) => log(`warning: ${w}`), o.jobCommand ? childLauncher(o.jobCommand) : inProcess);
  if (o.httpPort === undefined) {
    await serveStdio(service, o.version);
    return;
  }
  let stopping: Promise<void> | null = null;
  const onSignal = () => {
    stopping ??= service.shutdown();
    void stopping.then(() => process.exit(0));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const token = o.httpToken ?? randomBytes(24).toString('base64url');
  await serveHttp(o.httpPort, service, o.version, log, token);
  if (o.httpToken === undefined) log(`clients send the header "Authorization: Bearer ${token}" (set ACIA_MCP_TOKEN to choose it)`);
  await new Promise<void>(() => undefined);
}

/** One client on stdin/stdout, until it closes stdin or stops this process. */
async function serveStdio(service: RunsService, version: string): Promise<void> {
  const waiting = new Set<string>();
  const server = createAciaMcpServer(service, version, waiting);
  let leaving: Promise<void> | null = null;
  // The client is gone: runs it waits on stop with its call; the others are left to finish on their own.
  const leave = () =>
    (leaving ??= (async () => {
      const awaited = [...waiting];
      const kept = service.detach(service.running().filter((id) => !waiting.has(id)));
      await service.stop([...awaited, ...kept]);
    })());
  const onSignal = () => {
    void leave().then(() => process.exit(0));
  };
  // A client stopping its server (SIGTERM after closing stdin, as the MCP SDK does) or a Ctrl-C in its terminal.
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
  });
  await server.connect(new StdioServerTransport());
  await Promise.race([closed, new Promise<void>((resolve) => process.stdin.once('end', () => resolve()))]);
  await leave();
}

async function serveHttp(port: number, service: RunsService, version: string, log: (line: string) => void, token: string): Promise<void> {
  const expected = Buffer.from(`Bearer ${token}`);
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((req, res) => {
    void handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: String(e) }, id: null }));
    });
  });
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (!(req.url ?? '').startsWith('/mcp')) {
      res.writeHead(404).end('acia mcp serves /mcp\n');
      return;
    }
    // Before anything else, a browser's request from a foreign page (or a rebound DNS name) is refused.
    const refused = refusedOrigin(req.headers, (http.address() as AddressInfo).port);
    if (refused !== null) {
      res.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: `forbidden: ${refused}` }, id: null }));
      return;
    }
    // Any local user or process can reach 127.0.0.1; driving the team (your keys, your repos) needs the token.
    const given = Buffer.from(req.headers.authorization ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      res
        .writeHead(401, { 'content-type': 'application/json', 'www-authenticate': WWW_AUTHENTICATE })
        .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'missing or wrong bearer token: acia mcp takes the static token it printed at start (or ACIA_MCP_TOKEN) as "Authorization: Bearer <token>"' }, id: null }));
      return;
    }
    const id = req.headers['mcp-session-id'];
    const existing = typeof id === 'string' ? sessions.get(id) : undefined;
    if (existing) {
      await existing.handleRequest(req, res);
      return;
    }
    if (req.method !== 'POST' || id !== undefined) {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'no such session; start with an initialize request' }, id: null }));
      return;
    }
    const { port: bound } = http.address() as AddressInfo;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => {
        sessions.set(sid, transport);
      },
      // A web page the user visits must not be able to drive the team through DNS rebinding.
      enableDnsRebindingProtection: true,
      allowedHosts: [`127.0.0.1:${bound}`, `localhost:${bound}`],
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await createAciaMcpServer(service, version).connect(transport);
    await transport.handleRequest(req, res);
  };
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, '127.0.0.1', () => resolve());
  });
  log(`listening on http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
}
