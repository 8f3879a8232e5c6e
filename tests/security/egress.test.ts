// Network for sandboxed commands when allowedHosts is set: through the filtering proxy to allowed hosts
// and ports only. A command that ignores the proxy has no route out; one that asks the proxy for
// anything else gets 403 and the host never sees the request.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BwrapRunner } from '../../src/core/sandbox/bwrap-runner.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';
import { aciaTool, expectNoLeak, makeFixture, type Fixture } from './fixture.js';

// The client runs inside the sandbox with node (always there), speaking to the proxy by hand so the test
// does not depend on curl: `get <url>` sends an absolute-URL request, `connect <host:port> <path>` tunnels.
const CLIENT = `
import http from 'node:http';
const [mode, target, p = '/'] = process.argv.slice(2);
const proxy = new URL(process.env.HTTP_PROXY ?? 'http://127.0.0.1:9');
const done = (s, body) => { console.log(JSON.stringify({ status: s, body })); };
if (mode === 'get') {
  // A hostile Host header: the proxy must send the allowed host's own.
  const req = http.request({ host: proxy.hostname, port: proxy.port, path: target, method: 'GET', headers: { host: 'attacker.example' } }, (res) => {
    let b = ''; res.on('data', (c) => (b += c)); res.on('end', () => done(res.statusCode, b));
  });
  req.on('error', (e) => done(0, e.code ?? e.message)); req.end();
} else if (mode === 'connect') {
  const req = http.request({ host: proxy.hostname, port: proxy.port, method: 'CONNECT', path: target });
  req.on('connect', (res, socket) => {
    if (res.statusCode !== 200) return done(res.statusCode, '');
    socket.write('GET ' + p + ' HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n');
    let b = ''; socket.on('data', (c) => (b += c)); socket.on('end', () => done(200, b.split('\\r\\n\\r\\n').slice(1).join('')));
  });
  req.on('error', (e) => done(0, e.code ?? e.message)); req.end();
} else {
  const [host, port] = target.split(':');
  const req = http.get({ host, port: Number(port), path: p }, (res) => { let b = ''; res.on('data', (c) => (b += c)); res.on('end', () => done(res.statusCode, b)); });
  req.on('error', (e) => done(0, e.code ?? e.message));
}
`;

const hasSocat = spawnSync('socat', ['-V']).status === 0;
// CI installs socat (.ci/run); elsewhere the suite skips without it, as it does without bubblewrap.
if (!hasSocat && process.env.ACIA_TEST_REQUIRE_SANDBOX === '1') throw new Error('socat is missing; .ci/run installs it');
const sandboxed = sandboxAvailable() && hasSocat;
let fx: Fixture;
const seen: string[] = [];
const hostHeaders: string[] = [];
let allowed: http.Server;
let denied: http.Server;
let allowedPort = 0;
let deniedPort = 0;

beforeAll(async () => {
  fx = makeFixture();
  fs.writeFileSync(path.join(fx.repo, 'client.mjs'), CLIENT);
  const listen = (name: string) => {
    const s = http.createServer((req, res) => {
      seen.push(`${name} ${req.url}`);
      hostHeaders.push(req.headers.host ?? '');
      res.end(`hello from ${name}`);
    });
    return new Promise<http.Server>((resolve) => s.listen(0, '127.0.0.1', () => resolve(s)));
  };
  allowed = await listen('allowed');
  denied = await listen('denied');
  allowedPort = (allowed.address() as AddressInfo).port;
  deniedPort = (denied.address() as AddressInfo).port;
});
afterAll(() => {
  allowed.close();
  denied.close();
  fx.cleanup();
});

describe.skipIf(!sandboxed)('allowedHosts through the egress proxy (bwrap + socat)', () => {
  const run = async (args: string, extraHosts: string[] = []): Promise<{ status: number; body: string }> => {
    const runner = new BwrapRunner({ root: fx.repo, allowedHosts: [`127.0.0.1:${allowedPort}`, ...extraHosts] });
    const r = await runner.run(`${JSON.stringify(process.execPath)} client.mjs ${args}`, { cwd: fx.repo, timeoutMs: 20_000 });
    const line = r.output.trim().split('\n').at(-1) ?? '';
    expect(line, r.output).toMatch(/^\{/);
    return JSON.parse(line) as { status: number; body: string };
  };

  it('an allowed host:port is reached through the proxy, by plain HTTP and by a CONNECT tunnel', async () => {
    expect(await run(`get http://127.0.0.1:${allowedPort}/plain`)).toEqual({ status: 200, body: 'hello from allowed' });
    expect(await run(`connect 127.0.0.1:${allowedPort} /tunnel`)).toEqual({ status: 200, body: 'hello from allowed' });
    expect(seen).toEqual(expect.arrayContaining(['allowed /plain', 'allowed /tunnel']));
    // the Host header the command chose never reaches the server
    expect(hostHeaders[seen.indexOf('allowed /plain')]).toBe(`127.0.0.1:${allowedPort}`);
  });

  it('an allowed name that resolves to an internal address is refused (no reaching host services or cloud metadata)', async () => {
    const r = await run(`get http://localhost:${allowedPort}/by-name`, [`localhost:${allowedPort}`]);
    expect(r.status).toBe(403);
    expect(r.body).toContain('resolves to the internal address');
    expect((await run(`connect localhost:${allowedPort} /by-name`, [`localhost:${allowedPort}`])).status).toBe(403);
    expect(seen).not.toContain('allowed /by-name');
  });

  it('an allowed server that answers with a broken status line gets a 502, and ACIA keeps running', async () => {
    const broken = net.createServer((socket) => socket.end('HTTP/1.1 099 Nope\r\ncontent-length: 0\r\n\r\n'));
    await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
    const port = (broken.address() as AddressInfo).port;
    try {
      const r = await run(`get http://127.0.0.1:${port}/`, [`127.0.0.1:${port}`]);
      expect(r.status).toBe(502);
      // the proxy still serves the next command
      expect((await run(`get http://127.0.0.1:${allowedPort}/after`)).status).toBe(200);
    } finally {
      broken.close();
    }
  });

  it('anything else gets 403 from the proxy and never reaches the host', async () => {
    const get = await run(`get http://127.0.0.1:${deniedPort}/leak`);
    expect(get.status).toBe(403);
    expect(get.body).toContain('not in allowedHosts');
    expect((await run(`connect 127.0.0.1:${deniedPort} /leak`)).status).toBe(403);
    expect((await run('connect example.com:443')).status).toBe(403);
    expect(seen.some((s) => s.startsWith('denied'))).toBe(false);
  });

  it('a command that bypasses the proxy has no route out: the sandbox keeps its own network namespace', async () => {
    const direct = await run(`direct 127.0.0.1:${allowedPort} /direct`);
    expect(direct.status).toBe(0);
    expect(direct.body).toBe('ECONNREFUSED');
    expect(seen).not.toContain('allowed /direct');
  });

  it('a plain request for an https:// URL is refused: TLS goes through a CONNECT tunnel or not at all', async () => {
    expect((await run(`get https://127.0.0.1:${allowedPort}/tls-in-plain`)).status).toBe(403);
    expect(seen).not.toContain('allowed /tls-in-plain');
  });

  it('`acia tool run_command --allow-host` uses the same proxy, with secrets still scrubbed', async () => {
    const node = JSON.stringify(process.execPath);
    const ok = await aciaTool(fx, 'run_command', { command: `${node} client.mjs get http://127.0.0.1:${allowedPort}/cli; env` }, ['--allow-host', `127.0.0.1:${allowedPort}`]);
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(ok.result.forModel).toContain('"body":"hello from allowed"');
    expectNoLeak(ok.result.forModel);
    const bad = await aciaTool(fx, 'run_command', { command: 'true' }, ['--allow-host', 'http://evil.com/']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('allowedHosts: "http://evil.com/"');
  });

  it('without allowedHosts there is no proxy in the environment and no network', async () => {
    const runner = new BwrapRunner({ root: fx.repo });
    const r = await runner.run(`env | grep -ci proxy; ${JSON.stringify(process.execPath)} client.mjs direct 127.0.0.1:${allowedPort} /none`, { cwd: fx.repo, timeoutMs: 20_000 });
    expect(r.output.split('\n')[0]).toBe('0');
    expect(r.output).toContain('ECONNREFUSED');
    expect(seen).not.toContain('allowed /none');
  });
});

describe('allowedHosts configuration errors', () => {
  it('an entry that is not a host is refused when the runner is made, naming it', () => {
    expect(() => new BwrapRunner({ root: fx.repo, allowedHosts: ['http://evil.com/x'] })).toThrow(/allowedHosts: "http:\/\/evil.com\/x"/);
  });
});
