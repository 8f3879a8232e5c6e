// A local fake of Anthropic's Messages API (and OpenAI chat completions, the OpenAI Responses API and the
// Gemini API) that serves a script to the real SDKs and agents and records every request, for offline
// tests, `acia demo` and token/cache benchmarks.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { canonicalJson } from '../acm/canonical-json.js';
import { isAciaError, errorMessage } from '../errors.js';
import { PromptCacheEmulator } from './cache-emulation.js';
import { anthropicErrorBody, writeAnthropicJson, writeAnthropicStream, type TurnReply } from './fake-anthropic-wire.js';
import { openAiErrorBody, writeOpenAiJson, writeOpenAiStream } from './fake-openai-wire.js';
import { writeResponsesJson, writeResponsesStream } from './fake-responses-wire.js';
import { geminiErrorBody, writeGemini } from './fake-gemini-wire.js';
import { OpenAiPrefixCacheEmulator } from './openai-cache-emulation.js';
import { estimateTokens } from './pricing.js';
import { anthropicRequestProblems, openAiRequestProblems } from './request-invariants.js';
import { ScriptEngine, type Fault, type Script, type ServedTurn } from './script.js';

export interface FakeServerOptions {
  script: Script | ScriptEngine;
  /** Only loopback is allowed: the fake has no auth and must not be reachable from the network. */
  host?: '127.0.0.1';
  port?: number;
  /**
   * Check every request against ACIA's request invariants (default on): a request that breaks one gets
   * a 400 and is listed in `violations`. Off only for tests that send deliberately odd bodies.
   */
  checkInvariants?: boolean;
}

/** The wire a request came in on: Anthropic Messages, OpenAI chat completions, OpenAI Responses, Gemini. */
export type FakeApi = 'anthropic' | 'openai' | 'responses' | 'gemini';

export interface RecordedRequest {
  api: FakeApi;
  path: string;
  caller: string;
  model: string;
  stream: boolean;
  maxTokens: number | undefined;
  systemChars: number;
  toolsChars: number;
  messagesChars: number;
  toolCount: number;
  messageCount: number;
  estimatedInputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Input not served from or written to the cache. */
  inputTokens: number;
  /** Request headers, with authorization and api keys removed. */
  headers: Record<string, string>;
  fault: Fault | null;
  /** The parsed request body (tests assert cache_control placement and the mapped request on it). */
  body: Record<string, unknown>;
}

export interface FakeServer {
  /** Base URL for the Anthropic SDK (`baseURL`) — the OpenAI adapter appends `/v1` itself. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  readonly engine: ScriptEngine;
  /** Every broken request invariant and every request the script had no turn for, as `request N: problem`; tests assert it stays empty. */
  readonly violations: string[];
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 32 * 1024 * 1024;
/** `/<version>/models/<model>:<verb>` of the Gemini API (countTokens is not served: no script turn is a count). */
const GEMINI_PATH = /^\/v1(?:beta|alpha)?\/models\/([A-Za-z0-9._-]+):(generateContent|streamGenerateContent)$/;
/** What opens each API's prompt and which list ends its cacheable prefixes (see OpenAiPrefixCacheEmulator). */
const PROMPT_SHAPE: Record<FakeApi, { lead: readonly string[]; items: string }> = {
  anthropic: { lead: ['system', 'tools'], items: 'messages' },
  openai: { lead: ['tools'], items: 'messages' },
  responses: { lead: ['instructions', 'tools'], items: 'input' },
  gemini: { lead: ['systemInstruction', 'tools'], items: 'contents' },
};
const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'x-goog-api-key', 'proxy-authorization', 'cookie']);

export async function startFakeAnthropicServer(options: FakeServerOptions): Promise<FakeServer> {
  const engine = options.script instanceof ScriptEngine ? options.script : new ScriptEngine(options.script);
  const cache = new PromptCacheEmulator();
  const openAiCache = new OpenAiPrefixCacheEmulator();
  const requests: RecordedRequest[] = [];
  const violations: string[] = [];
  let counter = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(anthropicErrorBody('api_error', `fake server: ${errorMessage(e)}`, 'req_fake_error'));
      } else {
        res.destroy();
      }
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const [path = '/', query = ''] = (req.url ?? '/').split('?');
    const gemini = GEMINI_PATH.exec(path);
    const api: FakeApi | null = path === '/v1/messages' ? 'anthropic' : path.endsWith('/chat/completions') ? 'openai' : path === '/v1/responses' ? 'responses' : gemini ? 'gemini' : null;
    if (req.method !== 'POST' || api === null) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(anthropicErrorBody('not_found_error', `fake server: no route ${req.method ?? ''} ${path}`, 'req_fake_404'));
      return;
    }
    const n = ++counter;
    const requestId = `req_fake_${String(n).padStart(4, '0')}`;
    const body = parseBody(await readBody(req));
    if (body === undefined) {
      sendError(res, api, 400, 'invalid_request_error', 'fake server: request body is not a JSON object', requestId);
      return;
    }
    const caller = headerOf(req, 'x-acia-caller') ?? 'unknown';
    const measure = api === 'anthropic' ? cache.measure(body) : openAiCache.measure(body, PROMPT_SHAPE[api]);
    const record: RecordedRequest = {
      api,
      path,
      caller,
      model: gemini?.[1] ?? (typeof body['model'] === 'string' ? body['model'] : ''),
      stream: body['stream'] === true || gemini?.[2] === 'streamGenerateContent',
      maxTokens: numberOf(body['max_tokens'] ?? body['max_completion_tokens'] ?? body['max_output_tokens'] ?? (body['generationConfig'] as Record<string, unknown> | undefined)?.['maxOutputTokens']),
      systemChars: charsOf(body['system'] ?? body['instructions'] ?? body['systemInstruction']),
      toolsChars: charsOf(body['tools']),
      messagesChars: charsOf(body[PROMPT_SHAPE[api].items]),
      toolCount: Array.isArray(body['tools']) ? body['tools'].length : 0,
      messageCount: Array.isArray(body[PROMPT_SHAPE[api].items]) ? (body[PROMPT_SHAPE[api].items] as unknown[]).length : 0,
      estimatedInputTokens: measure.totalTokens,
      cacheReadTokens: measure.cacheReadTokens,
      cacheWriteTokens: measure.cacheWriteTokens,
      inputTokens: measure.inputTokens,
      headers: publicHeaders(req),
      fault: null,
      body,
    };
    requests.push(record);

    if (options.checkInvariants !== false) {
      // The Responses and Gemini wires serve external agents' requests, not ACIA's: ACIA's invariants are not theirs.
      const problems = api === 'anthropic' ? anthropicRequestProblems(body) : api === 'openai' ? openAiRequestProblems(body) : [];
      if (problems.length > 0) {
        violations.push(...problems.map((p) => `request ${n}: ${p}`));
        // Loud on purpose: the run fails with LLM_BAD_REQUEST and names the broken rule.
        sendError(res, api, 400, 'invalid_request_error', `fake server: request breaks an invariant: ${problems.join('; ')}`, requestId);
        return;
      }
    }

    let turn: ServedTurn;
    try {
      turn = engine.next(caller);
    } catch (e) {
      if (!isAciaError(e) || e.code !== 'SCRIPT_EXHAUSTED') throw e;
      // The clients see a plain 400 (they know nothing of scripts); the test that wrote a short script
      // sees it in `violations`.
      violations.push(`request ${n}: ${e.message}`);
      sendError(res, api, 400, 'invalid_request_error', e.message, requestId);
      return;
    }
    record.fault = turn.fault ?? null;
    if (await sendStatusFault(res, api, turn, requestId)) return;

    const outputText = turn.text + turn.toolCalls.map((c) => JSON.stringify(c.input)).join('');
    const reply: TurnReply = {
      turn,
      model: record.model,
      messageId: `msg_fake_${String(n).padStart(4, '0')}`,
      requestId,
      usage: {
        inputTokens: turn.usage?.inputTokens ?? measure.inputTokens,
        outputTokens: turn.usage?.outputTokens ?? estimateTokens(outputText),
        cacheReadTokens: measure.cacheReadTokens,
        cacheWriteTokens: measure.cacheWriteTokens,
      },
    };
    if (api === 'anthropic') {
      if (record.stream) await writeAnthropicStream(res, reply);
      else writeAnthropicJson(res, reply);
    } else if (api === 'responses') {
      if (record.stream) await writeResponsesStream(res, reply, body);
      else writeResponsesJson(res, reply, body);
    } else if (api === 'gemini') {
      await writeGemini(res, reply, gemini?.[2] !== 'streamGenerateContent' ? 'whole' : new URLSearchParams(query).get('alt') === 'sse' ? 'sse' : 'array');
    } else if (record.stream) {
      const so = body['stream_options'];
      await writeOpenAiStream(res, reply, typeof so === 'object' && so !== null && (so as Record<string, unknown>)['include_usage'] === true);
    } else {
      writeOpenAiJson(res, reply);
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    engine,
    violations,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Status-code faults; true when the response was sent. */
async function sendStatusFault(res: ServerResponse, api: FakeApi, turn: ServedTurn, requestId: string): Promise<boolean> {
  if (turn.latencyMs > 0 && (turn.fault === '429' || turn.fault === '529' || turn.fault === '500' || turn.fault === '401')) {
    await new Promise((r) => setTimeout(r, turn.latencyMs));
  }
  switch (turn.fault) {
    case '429':
      res.setHeader('retry-after', String(turn.retryAfterS ?? 1));
      sendError(res, api, 429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit', requestId);
      return true;
    case '529':
      if (turn.retryAfterS !== undefined) res.setHeader('retry-after', String(turn.retryAfterS));
      sendError(res, api, 529, 'overloaded_error', 'Overloaded', requestId);
      return true;
    case '500':
      sendError(res, api, 500, 'api_error', 'Internal server error', requestId);
      return true;
    case '401':
      sendError(res, api, 401, 'authentication_error', 'invalid x-api-key', requestId);
      return true;
    case 'garbage_body':
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'request-id': requestId });
      res.end('<html><body>502 Bad Gateway (upstream proxy)</body></html>');
      return true;
    default:
      return false;
  }
}

function sendError(res: ServerResponse, api: FakeApi, status: number, type: string, message: string, requestId: string): void {
  const body =
    api === 'anthropic'
      ? anthropicErrorBody(type, message, requestId)
      : api === 'gemini'
        ? geminiErrorBody(status, message)
        : openAiErrorBody(type, message, status === 401 ? 'invalid_api_key' : null);
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': requestId, 'x-request-id': requestId });
  res.end(body);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (b: Buffer) => {
      size += b.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('request body too large'));
        req.destroy();
        return;
      }
      parts.push(b);
    });
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function parseBody(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function publicHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined || SECRET_HEADERS.has(k)) continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

function charsOf(v: unknown): number {
  return v === undefined ? 0 : canonicalJson(v).length;
}

function numberOf(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined;
}
