// The model endpoint an external agent sees: a local proxy of the model API the agent speaks (Anthropic
// Messages, OpenAI Responses or Gemini; proxy-anthropic.ts, proxy-openai.ts, proxy-gemini.ts) that lets
// through model calls only, from the holder of a random per-task token, reserves each call's worst case
// against the run's budget (or the fleet's shared gate) before forwarding it upstream with the user's key,
// settles it at what it cost (usage read from that API's own fields, priced from the price table), and
// records it as an LLM_CALL with its request and response blobs, so an external agent's tokens and cost
// count and show like ACIA's own. A sandboxed agent
// reaches it only through a Unix socket in a private directory that the sandbox bridges to its own
// loopback; an agent on the host gets a 127.0.0.1 port, where the token is what keeps other local users out.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalJson } from '../../core/acm/canonical-json.js';
import { estimateTokens } from '../../core/llm/pricing.js';
import type { BudgetBreach, BudgetReservation } from '../budget.js';
import { recordModelCall, releaseBudget, reserveBudget, type RunContext } from '../run-context.js';
import { anthropicApi } from './proxy-anthropic.js';
import { isRefusal, type AgentApi, type ProxyApi, type ProxyPolicy } from './proxy-common.js';
import { geminiApi } from './proxy-gemini.js';
import { openAiApi } from './proxy-openai.js';

const APIS: Record<AgentApi, ProxyApi> = { anthropic: anthropicApi, openai: openAiApi, gemini: geminiApi };

export interface MeteringProxy {
  /** For an agent on the host; null when the proxy listens only on its socket (a sandboxed agent). */
  url: string | null;
  /** Holds `proxy.sock` (mode 0700, this user's only), for the sandbox's egress bridge. */
  socketDir: string;
  /** What the agent presents as its API key: random, for this task only, worthless anywhere else. */
  token: string;
  /** Set once a call was refused for the budget: the task stops with it. */
  breach(): BudgetBreach | null;
  /** The status the upstream answered a model call with when it refused the user's key (401/403), else null. */
  keyRefused(): number | null;
  /**
   * Model calls (POSTs) refused because they did not carry the task's token. A probe without a key
   * (Claude Code's native build sends `HEAD /` at start) is refused too, but not counted: it does not
   * mean the agent failed to find its key, and counting it would name a later, unrelated failure an
   * authentication problem.
   */
  tokenRefusals(): number;
  calls(): number;
  close(): Promise<void>;
}

export interface MeteringOptions {
  /** The model API the agent speaks (default: Anthropic's). */
  api?: AgentApi;
  actor: string;
  taskId: string;
  /** Where calls go: the user's endpoint (or the fake server in tests). */
  upstream: string;
  apiKey: string;
  /** Tells a scripted fake server which queue serves this agent (`acp:<model>` is appended). */
  callerPrefix: string;
  /** Also listen on a 127.0.0.1 port (an agent on the host cannot reach the socket through a bridge). */
  tcp: boolean;
  /** What the user's config lets through beyond plain model calls. */
  allow: Omit<ProxyPolicy, 'token'>;
  /** Told when the first call is refused for the budget: the session is stopped, not left to the agent's retries. */
  onBreach?: () => void;
}

export async function startMeteringProxy(ctx: RunContext, o: MeteringOptions): Promise<MeteringProxy> {
  const api = APIS[o.api ?? 'anthropic'];
  const reply = (res: http.ServerResponse, status: number, message: string): void => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(api.errorBody(status, api.errorType(status), message));
  };
  let breach: BudgetBreach | null = null;
  let keyRefused: number | null = null;
  let tokenRefusals = 0;
  let calls = 0;
  const token = `acia-task-${randomBytes(24).toString('base64url')}`;
  const policy: ProxyPolicy = { token, ...o.allow };
  // Calls whose LLM_CALL entry is still being written: the agent has its reply before the entry is
  // durable, so closing the proxy waits for them (a paid call is never recorded after its task ended).
  const inFlight = new Set<Promise<unknown>>();
  const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    // What this call holds against the budget until it is settled or released.
    let reservation: BudgetReservation | null = null;
    const call = collect(req).then(async (raw) => {
      const vetted = api.vet(req.method ?? 'GET', req.url ?? '', req.headers, raw, policy, ctx.deps.config.maxTokensPerCall);
      if (isRefusal(vetted)) {
        if (vetted.status === 401 && req.method === 'POST') tokenRefusals++;
        res.writeHead(vetted.status, { 'content-type': 'application/json' });
        return void res.end(api.errorBody(vetted.status, vetted.type, vetted.message));
      }
      const { metered, model } = vetted;
      const body = JSON.stringify(vetted.body);
      if (metered) {
        const reserved = reserveWorstCase(ctx, model, body, vetted.maxOutputTokens);
        if (reserved === null) {
          return reply(res, 400, `ACIA metering proxy: no price for ${model}, and this run's budget is in USD: add the model to "prices" in your ACIA config, or use a priced one`);
        }
        const checked = await reserved;
        if ('breach' in checked) {
          if (breach === null) queueMicrotask(() => o.onBreach?.());
          breach = checked.breach;
          return reply(res, 400, 'the run’s budget is exhausted (ACIA stopped this call)');
        }
        reservation = checked.reservation;
      }
      const started = ctx.rec.now();
      const headers: Record<string, string> = { ...vetted.headers, 'content-type': 'application/json', ...api.upstreamAuth(o.apiKey) };
      if (metered) headers['x-acia-caller'] = `${o.callerPrefix}${model === 'unknown' ? '' : model}`;
      let upstream: Response;
      try {
        upstream = await fetch(`${withSlash(o.upstream)}${vetted.path}`, { method: 'POST', headers, body });
      } catch (e) {
        return reply(res, 502, `ACIA could not reach the model endpoint: ${(e as Error).message}`);
      }
      if (metered && (upstream.status === 401 || upstream.status === 403)) keyRefused ??= upstream.status;
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
      const m = api.meter(text, (upstream.headers.get('content-type') ?? '').includes('event-stream'));
      const costUsd = ctx.deps.model.costUsd(m.model || model, m.usage);
      const held = reservation;
      reservation = null;
      // Waited for (see `inFlight`): the agent already has its reply, and its task may end as soon as it reads it.
      await recordModelCall(ctx, o.actor, held, {
        taskId: o.taskId,
        caller: o.actor,
        model: m.model || model,
        usage: m.usage,
        costUsd,
        stopReason: m.stopReason,
        started,
        durable: true,
        blobs: () => ({ request: canonicalJson(vetted.body), delta: null, response: text }),
      });
    }).catch((e: unknown) => {
      if (!res.headersSent) reply(res, 500, `ACIA metering proxy: ${(e as Error).message}`);
      else res.destroy();
    }).finally(() => {
      // A call that failed or was never metered costs nothing: its reservation goes back (or expires).
      const held = reservation;
      reservation = null;
      if (held) void releaseBudget(ctx, held);
    });
    inFlight.add(call);
    void call.finally(() => inFlight.delete(call));
  };
  const servers: http.Server[] = [];
  const socketDir = mkdtempSync(join(tmpdir(), 'acia-meter-'));
  const unix = http.createServer(handler);
  servers.push(unix);
  await new Promise<void>((resolve, reject) => unix.once('error', reject).listen(join(socketDir, 'proxy.sock'), resolve));
  let url: string | null = null;
  if (o.tcp) {
    const tcp = http.createServer(handler);
    servers.push(tcp);
    await new Promise<void>((resolve, reject) => tcp.once('error', reject).listen(0, '127.0.0.1', resolve));
    const address = tcp.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  }
  return {
    url,
    socketDir,
    token,
    breach: () => breach,
    keyRefused: () => keyRefused,
    tokenRefusals: () => tokenRefusals,
    calls: () => calls,
    close: async () => {
      for (const s of servers) {
        s.closeAllConnections();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
      await Promise.allSettled([...inFlight]);
      rmSync(socketDir, { recursive: true, force: true });
    },
  };
}

/**
 * The budget check ACIA's own calls get, before the call is sent: the request as sent plus a full
 * `max_tokens` reply, held against the budget until the call settles, so calls the agent makes at
 * once are each checked against the others' worst case (minutes stay this process's; with the fleet's
 * shared gate, cost and tokens are reserved there). Null: the call has no price and the run's budget is
 * in USD, so it is refused rather than reserved.
 */
function reserveWorstCase(ctx: RunContext, model: string, body: string, maxTokens: number): ReturnType<typeof reserveBudget> | null {
  const inputTokens = estimateTokens(body);
  const usd = ctx.deps.model.costUsd(model, { inputTokens, outputTokens: maxTokens, cacheReadTokens: 0, cacheWriteTokens: 0 });
  // A USD budget bounds only calls ACIA can price: the agent names the model (a prompt-injected one can call
  // the proxy itself with its token), so one without a price would spend past the budget unseen.
  if (usd === null && ctx.deps.config.budget.maxCostUsd !== undefined && !ctx.state.budgetWaived) return null;
  return reserveBudget(ctx, { usd, tokens: inputTokens + maxTokens });
}

function collect(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });
}

function withSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}
