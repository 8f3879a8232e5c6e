// Network for sandboxed commands when the config allows hosts. The sandbox keeps its own network
// namespace (loopback only); inside it socat listens on 127.0.0.1 and forwards to a Unix socket that
// is bind-mounted in, where this HTTP proxy — running in ACIA, outside the sandbox — lets through
// CONNECT tunnels and plain HTTP requests to allowed hosts and ports only. Everything else gets 403.
// Name resolution happens here, on the host, for allowed names only.
import { mkdtempSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { lookup } from 'node:dns/promises';
import { join } from 'node:path';
import { AciaError } from '../errors.js';

/** One allow-list entry: `host` (ports 80 and 443), `host:port`, or `*.domain` for its subdomains. */
export interface HostRule {
  host: string;
  wildcard: boolean;
  port: number | null;
}

const LABEL = '[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?';
const NAME = new RegExp(`^${LABEL}(\\.${LABEL})*$`);
/** Dotted quad with no leading zeros (`010.0.0.1` reads as octal to some resolvers and not to others). */
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

export function parseHostRule(entry: string): HostRule {
  const text = entry.trim().toLowerCase();
  const m = /^(.*?)(?::(\d{1,5}))?$/.exec(text);
  const host = m?.[1] ?? '';
  const port = m?.[2] === undefined ? null : Number(m[2]);
  const wildcard = host.startsWith('*.');
  const base = wildcard ? host.slice(2) : host;
  // A wildcard needs a registrable-looking domain under it: `*.example.com`, not `*.com` or `*.1`.
  const validName = NAME.test(base) && !/^[\d.]+$/.test(base) && (!wildcard || base.includes('.'));
  const valid = (validName || (!wildcard && IPV4.test(base))) && (port === null || (port >= 1 && port <= 65535));
  if (!valid) throw new AciaError('CONFIG_INVALID', `allowedHosts: ${JSON.stringify(entry)} is not a host, host:port or *.domain`);
  return { host: base, wildcard, port };
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
  close(): Promise<void>;
}

/** Connections the proxy holds at once: a sandboxed command cannot exhaust ACIA's file descriptors. */
const MAX_CONNECTIONS = 128;
/** A tunnel or request with no traffic for this long is closed. */
const IDLE_MS = 120_000;
/** Hop-by-hop headers a proxy must not forward (RFC 9110 §7.6.1), plus the proxy's own. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade'];

/**
 * Addresses a name may not resolve to: loopback, private, link-local (cloud metadata at 169.254.169.254),
 * carrier-grade NAT, unspecified and multicast. An entry that names such an address literally is allowed.
 */
const INTERNAL = new net.BlockList();
for (const [net4, bits] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.168.0.0', 16], ['224.0.0.0', 4], ['240.0.0.0', 4]] as const) {
  INTERNAL.addSubnet(net4, bits, 'ipv4');
}
// No `::ffff:0:0/96` rule: BlockList already checks an IPv4-mapped address against the IPv4 rules above,
// and such a rule would also match every plain IPv4 address (it refused every public host).
for (const [net6, bits] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) {
  INTERNAL.addSubnet(net6, bits, 'ipv6');
}

export function isInternal(address: string): boolean {
  const family = net.isIPv6(address) ? 'ipv6' : 'ipv4';
  return INTERNAL.check(address, family);
}

/**
 * Where to connect for an allowed `host:port`: an IP literal as written, or a name resolved here, once,
 * and refused when it resolves to an internal address (the connection then goes to that same address, so
 * a second lookup cannot rebind it).
 */
async function resolveTarget(host: string): Promise<{ address: string } | { refused: string }> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (net.isIP(bare)) return { address: bare };
  try {
    const { address } = await lookup(bare);
    return isInternal(address) ? { refused: `${bare} resolves to the internal address ${address}` } : { address };
  } catch (e) {
    return { refused: `${bare} does not resolve (${(e as { code?: string }).code ?? 'lookup failed'})` };
  }
}

/** Starts the filtering proxy on a Unix socket in a fresh private directory. It never keeps the process alive. */
export async function startEgressProxy(allowed: readonly string[]): Promise<EgressProxy> {
  const rules = allowed.map(parseHostRule);
  const dir = mkdtempSync(join(tmpdir(), 'acia-net-'));
  const socketPath = join(dir, 'proxy.sock');
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket): void => {
    // Nothing the sandbox holds open may keep ACIA from exiting, or live past its idle limit.
    s.unref();
    s.setTimeout(IDLE_MS, () => s.destroy());
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  };

  const server = http.createServer((req, res) => {
    req.on('error', () => res.destroy());
    res.on('error', () => req.destroy());
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
    const refuse = (why: string): void => {
      res.writeHead(403, { 'content-type': 'text/plain', connection: 'close' }).end(`acia sandbox: ${target} ${why}\n`);
    };
    if (url.protocol !== 'http:') return refuse('is not plain http (use a CONNECT tunnel for https)');
    if (!hostAllowed(rules, url.hostname, port)) return refuse('is not in allowedHosts');
    void resolveTarget(url.hostname).then((to) => {
      if ('refused' in to) return refuse(to.refused);
      const headers = { ...req.headers };
      for (const h of HOP_BY_HOP) delete headers[h];
      // The upstream sees the host it was asked for, never a Host header the command chose: on a shared
      // front end (a CDN, a reverse proxy) that header would pick a different site.
      headers.host = url.host;
      const upstream = http.request({ host: to.address, port, method: req.method, path: `${url.pathname}${url.search}`, headers }, (up) => {
        const status = up.statusCode ?? 0;
        if (status < 100 || status > 999) {
          res.writeHead(502, { 'content-type': 'text/plain', connection: 'close' }).end(`acia sandbox: ${target} answered with an invalid status\n`);
          up.destroy();
          return;
        }
        const back = { ...up.headers };
        for (const h of HOP_BY_HOP) delete back[h];
        try {
          res.writeHead(status, back);
        } catch {
          res.destroy();
          up.destroy();
          return;
        }
        up.on('error', () => res.destroy());
        up.pipe(res);
      });
      upstream.on('socket', track);
      upstream.on('error', (e) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain', connection: 'close' }).end(`acia sandbox: ${target}: ${e.message}\n`);
        else res.destroy();
      });
      req.pipe(upstream);
    });
  });

  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    // `client` is already tracked: it arrived through 'connection'.
    client.on('error', () => client.destroy());
    const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(req.url ?? '');
    const target = req.url ?? '?';
    const refuse = (why: string): void => {
      client.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nacia sandbox: ${target} ${why}\n`);
    };
    if (!m || !hostAllowed(rules, m[1]!, Number(m[2]))) return refuse('is not in allowedHosts');
    const port = Number(m[2]);
    void resolveTarget(m[1]!).then((to) => {
      if ('refused' in to) return refuse(to.refused);
      const upstream = net.connect({ host: to.address, port });
      track(upstream);
      // Either side closing or failing ends the tunnel on both.
      const end = (): void => {
        client.destroy();
        upstream.destroy();
      };
      client.once('close', end);
      upstream.once('close', end);
      let connected = false;
      upstream.once('connect', () => {
        connected = true;
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length > 0) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', (e) => {
        if (!connected && client.writable) {
          client.end(`HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\nacia sandbox: ${target}: ${e.message}\n`);
        } else end();
      });
    });
  });
  server.on('connection', track);
  server.on('clientError', (_e, socket) => socket.destroy());
  server.maxConnections = MAX_CONNECTIONS;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  server.on('error', () => undefined);
  server.unref();
  const cleanup = (): void => rmSync(dir, { recursive: true, force: true });
  process.once('exit', cleanup);
  return {
    socketPath,
    dir,
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
