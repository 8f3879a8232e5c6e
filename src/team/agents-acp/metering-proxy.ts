// The model endpoint an external agent sees: a local Anthropic Messages API proxy that checks the run's
// budget (or reserves it in the fleet's shared gate) before each call, forwards it upstream with the
// user's key (the agent only ever holds a placeholder), and records each call as an LLM_CALL with its
// request and response blobs, so an external agent's tokens and cost count and show like ACIA's own.
// Listens on 127.0.0.1 (unsandboxed agents) and on a Unix socket that the sandbox bridges to its own
// loopback.
import { mkdtempSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalJson } from '../../core/acm/canonical-json.js';
import type { Usage } from '../../core/llm/types.js';
import type { BudgetBreach, BudgetReservation } from '../budget.js';
import { recordModelCall, reserveBudget, type RunContext } from '../run-context.js';

export interface MeteringProxy {
  /** For an agent on the host. */
  url: string;
  /** Holds `proxy.sock`, for the sandbox's egress bridge. */
  socketDir: string;
  /** Set once a call was refused for the budget: the task stops with it. */
  breach(): BudgetBreach | null;
  calls(): number;
  close(): Promise<void>;
}

export interface MeteringOptions {
  actor: string;
  taskId: string;
  /** Where calls go: the user's endpoint (or the fake server in tests). */
  upstream: string;
  apiKey: string;
  /** Tells a scripted fake server which queue serves this agent (`acp:<model>` is appended). */
  callerPrefix: string;
}

interface Metered {
  usage: Usage;
  stopReason: string;
  model: string;
}

export async function startMeteringProxy(ctx: RunContext, o: MeteringOptions): Promise<MeteringProxy> {
  let breach: BudgetBreach | null = null;
  let calls = 0;
  // Calls whose LLM_CALL entry is still being written: the agent has its reply before the entry is
  // durable, so closing the proxy waits for them (a paid call is never recorded after its task ended).
  const inFlight = new Set<Promise<unknown>>();
  const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    // What the fleet's shared budget holds for this call until it is settled or released.
    let reservation: BudgetReservation | null = null;
    const call = collect(req).then(async (body) => {
      const metered = req.method === 'POST' && /\/v1\/messages\/?(\?|$)/.test(req.url ?? '');
      let parsed: { model?: unknown; max_tokens?: unknown } = {};
      if (metered) {
        try {
          parsed = JSON.parse(body.toString('utf8')) as typeof parsed;
        } catch {
          return reply(res, 400, 'invalid_request_error', 'request body is not JSON');
        }
        const model = typeof parsed.model === 'string' ? parsed.model : 'unknown';
        const checked = await checkProxied(ctx, model, body.length, typeof parsed.max_tokens === 'number' ? parsed.max_tokens : ctx.deps.config.maxTokensPerCall);
        if ('breach' in checked) {
          breach = checked.breach;
          return reply(res, 400, 'invalid_request_error', 'the run’s budget is exhausted (ACIA stopped this call)');
        }
        reservation = checked.reservation;
      }
      const started = ctx.rec.now();
      const headers: Record<string, string> = { 'content-type': 'application/json', 'x-api-key': o.apiKey };
      for (const h of ['anthropic-version', 'anthropic-beta', 'accept']) {
        const v = req.headers[h];
        if (typeof v === 'string') headers[h] = v;
      }
      if (metered) headers['x-acia-caller'] = `${o.callerPrefix}${typeof parsed.model === 'string' ? parsed.model : ''}`;
      let upstream: Response;
      try {
        upstream = await fetch(`${withSlash(o.upstream)}${(req.url ?? '/').replace(/^\/+/, '')}`, { method: req.method ?? 'GET', headers, ...(body.length > 0 ? { body } : {}) });
      } catch (e) {
        return reply(res, 502, 'api_error', `ACIA could not reach the model endpoint: ${(e as Error).message}`);
      }
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
      const chunks: Buffer[] = [];
      if (upstream.body) {
        for await (const chunk of upstream.body) {
          const b = Buffer.from(chunk as Uint8Array);
          chunks.push(b);
          res.write(b);
        }
      }
      res.end();
      if (!metered || upstream.status !== 200) return;
      calls++;
      const text = Buffer.concat(chunks).toString('utf8');
      const m = meter(text, (upstream.headers.get('content-type') ?? '').includes('event-stream'));
      const costUsd = ctx.deps.model.costUsd(m.model || String(parsed.model), m.usage);
      const held = reservation;
      reservation = null;
      // Waited for (see `inFlight`): the agent already has its reply, and its task may end as soon as it reads it.
      await recordModelCall(ctx, o.actor, held, {
        taskId: o.taskId,
        caller: o.actor,
        model: m.model || (typeof parsed.model === 'string' ? parsed.model : 'unknown'),
        usage: m.usage,
        costUsd,
        stopReason: m.stopReason,
        started,
        durable: true,
        blobs: () => [canonicalJson(JSON.parse(body.toString('utf8')) as unknown), text],
      });
    }).catch((e: unknown) => {
      if (!res.headersSent) reply(res, 500, 'api_error', `ACIA metering proxy: ${(e as Error).message}`);
      else res.destroy();
    }).finally(() => {
      // A call that failed or was never metered costs nothing: its reservation goes back (or expires).
      const held = reservation;
      reservation = null;
      if (held) void ctx.deps.fleet?.budgetGate?.release(held).catch(() => undefined);
    });
    inFlight.add(call);
    void call.finally(() => inFlight.delete(call));
  };
  const tcp = http.createServer(handler);
  const unix = http.createServer(handler);
  const socketDir = mkdtempSync(join(tmpdir(), 'acia-meter-'));
  await new Promise<void>((resolve, reject) => tcp.once('error', reject).listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve, reject) => unix.once('error', reject).listen(join(socketDir, 'proxy.sock'), resolve));
  const address = tcp.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    socketDir,
    breach: () => breach,
    calls: () => calls,
    close: async () => {
      for (const s of [tcp, unix]) {
        s.closeAllConnections();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
      await Promise.allSettled([...inFlight]);
      rmSync(socketDir, { recursive: true, force: true });
    },
  };
}

/**
 * The budget check ACIA's own calls get, for the request's size plus a full reply, before it is sent
 * (minutes stay this process's; with the fleet's shared gate, cost and tokens are reserved there).
 */
function checkProxied(ctx: RunContext, model: string, bodyBytes: number, maxTokens: number): ReturnType<typeof reserveBudget> {
  const inputTokens = Math.ceil(bodyBytes / 4);
  return reserveBudget(ctx, { usd: ctx.deps.model.costUsd(model, { inputTokens, outputTokens: maxTokens, cacheReadTokens: 0, cacheWriteTokens: 0 }), tokens: inputTokens + maxTokens });
}

/** Usage, stop reason and model from a Messages API reply, streamed (SSE) or whole. */
export function meter(text: string, streamed: boolean): Metered {
  const usage: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  let stopReason = 'unknown';
  let model = '';
  const take = (u: Record<string, unknown> | undefined) => {
    if (!u) return;
    const n = (k: string) => (typeof u[k] === 'number' ? u[k] : undefined);
    usage.inputTokens = n('input_tokens') ?? usage.inputTokens;
    usage.outputTokens = n('output_tokens') ?? usage.outputTokens;
    usage.cacheReadTokens = n('cache_read_input_tokens') ?? usage.cacheReadTokens;
    usage.cacheWriteTokens = n('cache_creation_input_tokens') ?? usage.cacheWriteTokens;
  };
  const events: unknown[] = [];
  if (streamed) {
    for (const line of text.split('\n')) {
      if (!line.startsWith('data:')) continue;
      try {
        events.push(JSON.parse(line.slice(5).trim()));
      } catch {
        /* a keep-alive or a cut line: nothing to meter */
      }
    }
  } else {
    try {
      events.push({ type: 'message', message: JSON.parse(text) as unknown });
    } catch {
      /* not JSON: nothing to meter */
    }
  }
  for (const ev of events) {
    const e = ev as { type?: string; message?: { model?: string; usage?: Record<string, unknown>; stop_reason?: string | null }; usage?: Record<string, unknown>; delta?: { stop_reason?: string | null } };
    if (e.type === 'message_start' || e.type === 'message') {
      model = e.message?.model ?? model;
      take(e.message?.usage);
      if (e.message?.stop_reason) stopReason = e.message.stop_reason;
    } else if (e.type === 'message_delta') {
      take(e.usage);
      if (e.delta?.stop_reason) stopReason = e.delta.stop_reason;
    }
  }
  return { usage, stopReason, model };
}

function collect(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });
}

function reply(res: http.ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ type: 'error', error: { type, message } }));
}

function withSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}
