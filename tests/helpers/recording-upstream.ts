// A model endpoint in front of the fake Anthropic server that records every request exactly as it arrived
// (method, raw path, headers, body) before passing it on: what a proxy in between really sent upstream,
// including requests the fake server has no route for. `hold` lets a test act while one request waits.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface UpstreamRequest {
  method: string;
  /** The request target as received, not normalised. */
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface RecordingUpstream {
  url: string;
  requests: UpstreamRequest[];
  close(): Promise<void>;
}

/**
 * Forwards to `target` (the fake server's URL). `hold(request)` is awaited before forwarding: a test
 * uses it to do something at a chosen point of a client's work (the client waits for its answer).
 */
export async function startRecordingUpstream(target: string, hold: (r: UpstreamRequest) => Promise<void> = () => Promise.resolve()): Promise<RecordingUpstream> {
  const requests: UpstreamRequest[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readAll(req);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      const seen: UpstreamRequest = { method: req.method ?? '', path: req.url ?? '', headers, body };
      requests.push(seen);
      await hold(seen);
      const forward: Record<string, string> = { ...headers };
      delete forward.host;
      delete forward['content-length'];
      const method = req.method ?? 'GET';
      const r = await fetch(`${target}${req.url ?? '/'}`, { method, headers: forward, ...(body === '' || method === 'GET' ? {} : { body }) });
      res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
      res.end(Buffer.from(await r.arrayBuffer()));
    })().catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(502).end(String(e));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readAll(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}
