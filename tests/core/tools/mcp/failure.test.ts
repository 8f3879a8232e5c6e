// Why a server did not start, named by its cause: an HTTP server's refusal or status (streamable HTTP
// and the legacy SSE transport), the line of a crashed server's stderr that says what went wrong, and
// what to do about `npx -y` in a sandbox without network.
import { createServer, type Server } from 'node:http';
import { createServer as netServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMcpServers, UserMcpServer } from '../../../../src/core/tools/mcp/config.js';
import { McpConnection } from '../../../../src/core/tools/mcp/connection.js';
import { startupHint, stderrSummary } from '../../../../src/core/tools/mcp/failure.js';

const NODE_THROW = `[eval]:1
throw new Error("BOOM_CFG is not set")
^

Error: BOOM_CFG is not set
    at [eval]:1:7
    at runScriptInThisContext (node:internal/vm:209:10)
    at node:internal/main/eval_string:51:3

Node.js v20.20.2
`;
const MODULE_NOT_FOUND = `node:internal/modules/cjs/loader:1228
  throw err;
  ^

Error: Cannot find module '/srv/mcp/index.js'
    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15) {
  code: 'MODULE_NOT_FOUND',
  requireStack: []
}

Node.js v20.20.2
`;
const PYTHON = `Traceback (most recent call last):
  File "/srv/server.py", line 3, in <module>
    import mcp
ModuleNotFoundError: No module named 'mcp'
`;

describe('stderrSummary', () => {
  it("keeps the error line of a Node or Python crash, not the stack's tail", () => {
    expect(stderrSummary(NODE_THROW)).toBe('Error: BOOM_CFG is not set');
    expect(stderrSummary(MODULE_NOT_FOUND)).toBe("Error: Cannot find module '/srv/mcp/index.js'");
    expect(stderrSummary(PYTHON)).toBe("ModuleNotFoundError: No module named 'mcp'");
  });

  it('keeps the last lines that are not noise when there is no error line', () => {
    expect(stderrSummary('starting\nnpm error code E403\nnpm error 403 Forbidden - GET https://registry.npmjs.org/x\n\n')).toBe('starting | npm error code E403 | npm error 403 Forbidden - GET https://registry.npmjs.org/x');
    expect(stderrSummary('')).toBe('');
  });
});

describe('startupHint', () => {
  const spec = (command: string, args: string[], allowedHosts: string[] = []) => loadMcpServers({ repo: null, user: { servers: { s: UserMcpServer.parse({ command, args, allowedHosts }) }, file: 'u' } }).servers[0]!;
  it('says a package runner needs the network the sandbox does not give, and says nothing for a plain command', () => {
    expect(startupHint(spec('npx', ['-y', '@scope/server']), true)).toMatch(/npx downloads the server .* the sandbox has no network: install the package .* "allowedHosts"/);
    expect(startupHint(spec('/usr/bin/pnpm', ['dlx', 'server']), true)).toMatch(/^pnpm downloads/);
    expect(startupHint(spec('npx', ['-y', 'x'], ['registry.npmjs.org']), true)).toMatch(/raise "startupTimeoutS"/);
    expect(startupHint(spec('node', ['server.js']), true)).toBe('');
  });
});

describe('an HTTP server that does not start', () => {
  let http: Server;
  let port = 0;
  let closedPort = 0;
  beforeAll(async () => {
    http = createServer((req, res) => {
      if (req.url?.startsWith('/auth')) res.writeHead(401, { 'www-authenticate': 'Bearer' }).end('{"error":"unauthorized"}');
      else if (req.url?.startsWith('/boom')) res.writeHead(500).end('database down');
      else res.writeHead(404).end('not here');
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    port = (http.address() as AddressInfo).port;
    const probe = netServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    closedPort = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
  });
  afterAll(() => new Promise((r) => http.close(r)));

  const start = async (transport: 'http' | 'sse', url: string): Promise<string> => {
    const [spec] = loadMcpServers({ repo: null, user: { servers: { web: UserMcpServer.parse({ type: transport, url, headers: { 'X-Token': 'secret' } }) }, file: 'u' } }).servers;
    return McpConnection.open(spec!, { root: '/', sandbox: 'off', parentEnv: {}, clientVersion: 't' }).then(
      () => 'started',
      (e: Error) => e.message,
    );
  };

  it.each(['http', 'sse'] as const)('names refused, 404, 401 and 500 apart (%s)', async (transport) => {
    expect(await start(transport, `http://127.0.0.1:${closedPort}/mcp`)).toBe(`MCP server web did not start: nothing listens at http://127.0.0.1:${closedPort}/mcp: connection refused (ECONNREFUSED)`);
    expect(await start(transport, `http://127.0.0.1:${port}/nope`)).toMatch(/^MCP server web did not start: HTTP 404 from http:\/\/127\.0\.0\.1:\d+\/nope: no MCP endpoint at this path/);
    expect(await start(transport, `http://127.0.0.1:${port}/auth?key=hidden`)).toMatch(/did not start: HTTP 401 from http:\/\/127\.0\.0\.1:\d+\/auth: the server wants credentials; give them in the server's "headers".*does not do OAuth$/);
    expect(await start(transport, `http://127.0.0.1:${port}/boom`)).toMatch(/did not start: HTTP 500 from http:\/\/127\.0\.0\.1:\d+\/boom/);
  });
});
