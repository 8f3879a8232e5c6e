// The `acia ui` HTTP server: the page, its script and style, JSON reads, two Server-Sent Event
// streams (the runs list and one run's entries) and the action endpoint. Every request passes the
// guard (token, Host, Origin) before anything else is looked at.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isRunId } from '../core/contain/run-id.js';
import { errorMessage } from '../core/errors.js';
import { packagePath } from '../core/package-root.js';
import { failureExcerpt } from '../core/tools/test-failures.js';
import { findInlineBlob } from '../core/ledger/inline-blobs.js';
import { renderWikiPages } from '../core/wiki/render.js';
import { isActionName, runAction } from './actions.js';
import { refuse, secure } from './guard.js';
import { RunHub } from './run-hub.js';
import { openSse } from './sse.js';
import { START, type RunStore } from './store.js';

export interface UiServerOptions {
  store: RunStore;
  token: string;
  /** 0 picks a free port. */
  port: number;
  /** Where the built page lives (dist/ui/web of the package). */
  assetsDir?: string;
}

export interface UiServer {
  url: string;
  port: number;
  hub: RunHub;
  close(): Promise<void>;
}

const MAX_BODY = 64 * 1024;
const MAX_BLOB = 512 * 1024;

interface Assets {
  html: string;
  files: Map<string, { type: string; body: Buffer }>;
}

function loadAssets(dir: string): Assets {
  const read = (name: string): Buffer => readFileSync(join(dir, name));
  return {
    html: read('index.html').toString('utf8'),
    files: new Map([
      ['/assets/app.js', { type: 'text/javascript; charset=utf-8', body: read('app.js') }],
      ['/assets/app.css', { type: 'text/css; charset=utf-8', body: read('app.css') }],
      ['/assets/icon.svg', { type: 'image/svg+xml', body: read('icon.svg') }],
    ]),
  };
}

export async function startUiServer(o: UiServerOptions): Promise<UiServer> {
  const assets = loadAssets(o.assetsDir ?? packagePath('dist', 'ui', 'web'));
  const hub = new RunHub(o.store);
  await hub.start();
  const open = new Set<ServerResponse>();
  let port = 0;
  const server: Server = createServer((req, res) => {
    secure(res);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const refusal = refuse(req, url, o.token, port);
    if (refusal) return text(res, refusal.status, `${refusal.message}\n`);
    handle(req, res, url).catch((e: unknown) => {
      if (!res.headersSent) text(res, 500, `${errorMessage(e)}\n`);
      else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const path = url.pathname;
    if (req.method === 'GET' && path === '/') {
      // The token is ours (base64url), so putting it into the page's asset URLs needs no escaping.
      return send(res, 200, 'text/html; charset=utf-8', assets.html.replaceAll('{{token}}', o.token));
    }
    const asset = assets.files.get(path);
    if (req.method === 'GET' && asset) return send(res, 200, asset.type, asset.body);
    if (req.method === 'GET' && path === '/api/info') return json(res, 200, { label: o.store.label, kind: o.store.kind });
    if (req.method === 'GET' && path === '/api/runs/stream') return listStream(req, res);
    const m = /^\/api\/runs\/([^/]+)\/([a-z]+)(?:\/([^/]+))?$/.exec(path);
    if (!m) return text(res, 404, 'not found\n');
    const runId = decodeURIComponent(m[1]!);
    if (!isRunId(runId)) return text(res, 404, 'not a run id\n');
    // A run that started a moment ago may not have reached the hub's watch yet.
    if (!hub.has(runId)) await hub.refresh(runId);
    if (!hub.has(runId)) return text(res, 404, `no run ${runId}\n`);
    const what = m[2]!;
    const arg = m[3] === undefined ? undefined : decodeURIComponent(m[3]);
    if (req.method === 'POST' && what === 'actions' && arg !== undefined) {
      if (!isActionName(arg)) return text(res, 404, `no action ${arg}\n`);
      if (!(req.headers['content-type'] ?? '').startsWith('application/json')) return text(res, 415, 'send JSON\n');
      const body = await readBody(req);
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        return json(res, 400, { ok: false, message: 'the body is not JSON' });
      }
      const r = await runAction({ hub, store: o.store }, arg, runId, parsed);
      return json(res, r.status, r.outcome);
    }
    if (req.method !== 'GET') return text(res, 405, 'method not allowed\n');
    switch (what) {
      case 'stream':
        return runStream(req, res, url, runId);
      case 'output':
        return output(res, runId, arg ?? '');
      case 'diff': {
        const d = await o.store.diff(runId, url.searchParams.get('base') ?? '', url.searchParams.get('commit') ?? '');
        return d === null ? text(res, 404, 'this diff is not available\n') : text(res, 200, d);
      }
      case 'wiki': {
        const { entries } = await o.store.read(runId, START, hub.fold(runId)?.count);
        const pages = renderWikiPages([{ runId, entries, manifest: null }], []);
        return text(res, 200, pages.get(`runs/${runId}.md`) ?? '');
      }
      default:
        return text(res, 404, 'not found\n');
    }
  }

  function listStream(req: IncomingMessage, res: ServerResponse): void {
    const sse = openSse(req, res, open);
    sse.event('rows', hub.rows());
    const off = hub.onRow((row) => sse.event('row', row));
    sse.onClose(off);
  }

  async function runStream(req: IncomingMessage, res: ServerResponse, url: URL, runId: string): Promise<void> {
    const last = Number(req.headers['last-event-id'] ?? url.searchParams.get('from') ?? '-1');
    const from = Number.isInteger(last) ? last + 1 : 0;
    const sse = openSse(req, res, open);
    const off = await hub.subscribe(runId, Math.max(0, from), (entries) => sse.event('entries', entries, String(entries.at(-1)!.seq)));
    sse.onClose(off);
  }

  /** A blob the run's ledger carries in an entry (a model response: core/ledger/inline-blobs.ts) rather than as a file. */
  async function inlineOutput(runId: string, ref: string): Promise<{ bytes: Buffer; truncated: boolean } | null> {
    const bytes = findInlineBlob((await o.store.read(runId, START)).entries, ref);
    return bytes === null ? null : { bytes: bytes.subarray(0, MAX_BLOB), truncated: bytes.length > MAX_BLOB };
  }

  async function output(res: ServerResponse, runId: string, ref: string): Promise<void> {
    const blob = (await o.store.blob(runId, ref, MAX_BLOB)) ?? (await inlineOutput(runId, ref));
    if (blob === null) return text(res, 404, 'no such output\n');
    let body = blob.bytes.toString('utf8');
    // Tool results and test runs store {forModel, ...}: the text the agent saw.
    try {
      const v = JSON.parse(body) as { forModel?: unknown };
      if (typeof v.forModel === 'string') body = v.forModel;
    } catch {
      // not JSON (or cut short): shown as it is
    }
    return json(res, 200, { text: body, truncated: blob.truncated, excerpt: failureExcerpt(body) });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, '127.0.0.1', () => resolve());
  });
  port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/?token=${o.token}`,
    port,
    hub,
    close: async () => {
      for (const r of open) r.end();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await hub.stop();
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error('the request body is too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.writeHead(status, { 'Content-Type': type });
  res.end(body);
}

function text(res: ServerResponse, status: number, body: string): void {
  send(res, status, 'text/plain; charset=utf-8', body);
}

function json(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}
