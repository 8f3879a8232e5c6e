// The Anthropic Messages API as the metering proxy serves it (Claude Code and other agents on it): a model
// call (and a free token count), nothing else. The path is judged after normalising it, the way the
// upstream's HTTP stack will read it; the body is parsed once and re-serialised, so what was checked is
// exactly what is sent; features that act on Anthropic's side (server tools, MCP connectors, files,
// batches, betas that enable them or are priced differently) need the user's config to allow them.
import { authorisedBy, bearerOf, emptyUsage, headerOf, jsonObject, originUrl, positiveInt, replyEvents, type Headers, type Metered, type ProxyApi, type ProxyPolicy, type Refusal, type VettedRequest } from './proxy-common.js';

export { isRefusal, type ProxyPolicy } from './proxy-common.js';

const ENDPOINTS: Record<string, 'messages' | 'count_tokens'> = { '/v1/messages': 'messages', '/v1/messages/count_tokens': 'count_tokens' };

/**
 * Betas that change only how the model answers the call in hand, at list prices: let through. Others
 * (files, batches, skills, MCP, code execution, web search/fetch, tool search, 1M context and fast mode,
 * which are priced differently, or any value not known here) are dropped from the header.
 */
export const SAFE_BETAS: ReadonlySet<string> = new Set([
  'claude-code-20250219',
  'interleaved-thinking-2025-05-14',
  'fine-grained-tool-streaming-2025-05-14',
  'token-efficient-tools-2025-02-19',
  'prompt-caching-2024-07-31',
  'prompt-caching-scope-2026-01-05',
  'context-management-2025-06-27',
  'output-128k-2025-02-19',
  'effort-2025-11-24',
  'structured-outputs-2025-12-15',
  'adaptive-thinking-2026-01-28',
  'tool-examples-2025-10-29',
  'token-counting-2024-11-01',
]);

/** Tools Anthropic defines but the client runs (the agent, in its sandbox): no server-side effect. */
const CLIENT_TOOL_TYPE = /^(custom|bash_\d{8}|text_editor_\d{8}|computer_\d{8}|memory_\d{8})$/;

/** Body fields that make Anthropic's side act (connect to a URL, keep a container). */
const SERVER_FIELDS = ['mcp_servers', 'container'];

/** The agent's token from `x-api-key` or `Authorization: Bearer`, compared in constant time. */
export function authorised(headers: Headers, token: string): boolean {
  return authorisedBy([headerOf(headers, 'x-api-key') ?? bearerOf(headers)], token);
}

/** The request as it may go upstream, or why not. `rawUrl` is the request target as received. */
export function vetRequest(method: string, rawUrl: string, headers: Headers, body: Buffer, policy: ProxyPolicy, maxTokensPerCall = 8192): VettedRequest | Refusal {
  if (!authorised(headers, policy.token)) return refuse(401, 'authentication_error', 'ACIA metering proxy: use the API key ACIA gave this agent');
  const url = originUrl(rawUrl);
  if (url === null) return refuse(404, 'not_found_error', 'ACIA metering proxy: only POST /v1/messages is served');
  const endpoint = ENDPOINTS[url.pathname];
  if (endpoint === undefined || method !== 'POST') return refuse(404, 'not_found_error', `ACIA metering proxy: ${method} ${url.pathname} is not served (only POST /v1/messages and /v1/messages/count_tokens)`);
  const fields = jsonObject(body);
  if (typeof fields === 'string') return refuse(400, 'invalid_request_error', fields);
  if (!policy.allowServerTools) {
    const field = SERVER_FIELDS.find((f) => f in fields);
    if (field) return refuse(400, 'invalid_request_error', `ACIA metering proxy: "${field}" is not allowed (set meteringProxy.allowServerTools in your ACIA config to allow it)`);
    const tools = Array.isArray(fields.tools) ? (fields.tools as unknown[]) : [];
    const server = tools.map((t) => (typeof t === 'object' && t !== null ? (t as { type?: unknown }).type : undefined)).find((t) => t !== undefined && (typeof t !== 'string' || !CLIENT_TOOL_TYPE.test(t)));
    if (server !== undefined) return refuse(400, 'invalid_request_error', `ACIA metering proxy: the server-side tool type ${JSON.stringify(server)} is not allowed (set meteringProxy.allowServerTools in your ACIA config to allow it)`);
  }
  const out: Record<string, string> = {};
  const version = headerOf(headers, 'anthropic-version');
  if (version !== undefined) out['anthropic-version'] = version;
  const betas = (headerOf(headers, 'anthropic-beta') ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b !== '' && (SAFE_BETAS.has(b) || policy.allowBetas.includes(b)));
  if (betas.length > 0) out['anthropic-beta'] = betas.join(',');
  const accept = headerOf(headers, 'accept');
  if (accept !== undefined) out.accept = accept;
  // Claude Code marks its calls `?beta=true`; nothing else in the query goes on.
  const query = url.searchParams.get('beta') === 'true' ? '?beta=true' : '';
  return {
    metered: endpoint === 'messages',
    path: `${url.pathname.slice(1)}${query}`,
    body: fields,
    headers: out,
    model: typeof fields.model === 'string' ? fields.model : 'unknown',
    // The API requires max_tokens: the call cannot produce more.
    maxOutputTokens: positiveInt(fields.max_tokens) ?? maxTokensPerCall,
  };
}

/** Usage, stop reason and model from a Messages API reply, streamed (SSE) or whole. */
export function meterAnthropic(text: string, streamed: boolean): Metered {
  const usage = emptyUsage();
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
  const events = streamed ? replyEvents(text, true) : replyEvents(text, false).map((message) => ({ type: 'message', message }));
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

export const anthropicApi: ProxyApi = {
  vet: vetRequest,
  meter: meterAnthropic,
  upstreamAuth: (apiKey) => ({ 'x-api-key': apiKey }),
  errorBody: (_status, type, message) => JSON.stringify({ type: 'error', error: { type, message } }),
  errorType: (status) => (status === 502 || status === 500 ? 'api_error' : 'invalid_request_error'),
};

function refuse(status: number, type: string, message: string): Refusal {
  return { status, type, message };
}
