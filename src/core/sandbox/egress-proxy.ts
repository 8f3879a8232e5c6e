// Network for sandboxed commands when the config allows hosts. The sandbox keeps its own network
// namespace (loopback only); inside it socat listens on 127.0.0.1 and forwards to a Unix socket that
// is bind-mounted in, where this HTTP proxy — running in ACIA, outside the sandbox — lets through
// CONNECT tunnels and plain HTTP requests to allowed hosts and ports only. Everything else gets 403.
// Name resolution happens here, on the host, for allowed names only.
import { mkdtempSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AciaError } from '../errors.js';

/** One allow-list entry: `host` (ports 80 and 443), `host:port`, or `*.domain` for its subdomains. */
export interface HostRule {
  host: string;
  wildcard: boolean;
  port: number | null;
}

const HOST = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

export function parseHostRule(entry: string): HostRule {
  const text = entry.trim().toLowerCase();
  const m = /^(.*?)(?::(\d{1,5}))?$/.exec(text);
  const host = m?.[1] ?? '';
  const port = m?.[2] === undefined ? null : Number(m[2]);
  if ((!HOST.test(host) && !IPV4.test(host)) || (port !== null && (port < 1 || port > 65535))) {
    throw new AciaError('CONFIG_INVALID', `allowedHosts: ${JSON.stringify(entry)} is not a host, host:port or *.domain`);
  }
  const wildcard = host.startsWith('*.');
  return { host: wildcard ? host.slice(2) : host, wildcard, port };
}

/** Whether an allowedHosts entry parses (for config validation). */
export function isHostRule(entry: string): boolean {
  try {
    parseHostRule(entry);
    return true;
  } catch {
    return false;
  }
}

/** Whether `host:port` is allowed. Hosts compare case-insensitively, without a trailing dot. */
export function hostAllowed(rules: readonly HostRule[], host: string, port: number): boolean {
  const h = host.toLowerCase().replace(/\.$/, '').replace(/^\[|\]$/g, '');
  return rules.some((r) => {
    const nameOk = r.wildcard ? h.endsWith(`.${r.host}`) : h === r.host;
    const portOk = r.port === null ? port === 80 || port === 443 : port === r.port;
    return nameOk && portOk;
  });
}

export interface EgressProxy {
  /** The Unix socket to bind into the sandbox. */
  socketPath: string;
  /** The directory holding it (what the sandbox bind-mounts). */
  dir: string;
  /** Requests seen, for the human's view and tests: `allow host:port` or `deny host:port`. */
  log: string[];
  close(): Promise<void>;
}

function deny(socket: net.Socket, target: string): void {
  socket.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nacia sandbox: ${target} is not in allowedHosts\n`);
}

/** Starts the filtering proxy on a Unix socket in a fresh private directory. It never keeps the process alive. */
export async function startEgressProxy(allowed: readonly string[]): Promise<EgressProxy> {
  const rules = allowed.map(parseHostRule);
  const dir = mkdtempSync(join(tmpdir(), 'acia-net-'));
  const socketPath = join(dir, 'proxy.sock');
  const log: string[] = [];
  const sockets = new Set<net.Socket>();

  const server = http.createServer((req, res) => {
    // Plain HTTP through a proxy: the request line holds an absolute URL.
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('acia sandbox: a proxy request needs an absolute http:// URL\n');
      return;
    }
    const port = url.port === '' ? 80 : Number(url.port);
    const target = `${url.hostname}:${port}`;
    if (url.protocol !== 'http:' || !hostAllowed(rules, url.hostname, port)) {
      log.push(`deny ${target}`);
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`acia sandbox: ${target} is not in allowedHosts\n`);
      return;
    }
    log.push(`allow ${target}`);
    const headers = { ...req.headers };
    delete headers['proxy-connection'];
    delete headers['proxy-authorization'];
    const upstream = http.request({ host: url.hostname, port, method: req.method, path: `${url.pathname}${url.search}`, headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', (e) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`acia sandbox: ${target}: ${e.message}\n`);
    });
    req.pipe(upstream);
  });

  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(req.url ?? '');
    const target = req.url ?? '?';
    if (!m || !hostAllowed(rules, m[1]!, Number(m[2]))) {
      log.push(`deny ${target}`);
      deny(client, target);
      return;
    }
    log.push(`allow ${target}`);
    const upstream = net.connect({ host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', (e) => {
      if (client.writable) client.end(`HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\nacia sandbox: ${target}: ${e.message}\n`);
      client.destroy();
    });
  });
  server.on('clientError', (_e, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  server.unref();
  const cleanup = (): void => rmSync(dir, { recursive: true, force: true });
  process.once('exit', cleanup);
  return {
    socketPath,
    dir,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => {
          process.removeListener('exit', cleanup);
          cleanup();
          resolve();
        });
      }),
  };
}

/** The port socat listens on inside the sandbox, and the environment that points tools at it. */
export const SANDBOX_PROXY_PORT = 3128;
export function proxyEnv(): Record<string, string> {
  const url = `http://127.0.0.1:${SANDBOX_PROXY_PORT}`;
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    ALL_PROXY: url,
    NO_PROXY: 'localhost,127.0.0.1',
    no_proxy: 'localhost,127.0.0.1',
  };
}
