// The OpenAI Responses API as the metering proxy serves it (Codex through codex-acp, and other agents on it):
// `POST /v1/responses` only, from the holder of the task's token (a Bearer key). Tools OpenAI runs on its
// side (web and file search, code interpreter, image generation, remote MCP) and fields that read or
// keep state in the user's account (a stored prompt, an earlier response or conversation, a background
// job) need the user's config to allow them. A call without an output limit gets the run's per-call one,
// so what is reserved before it is what it can cost at most.
import { authorisedBy, bearerOf, count, emptyUsage, headerOf, jsonObject, originUrl, positiveInt, replyEvents, type Headers, type Metered, type ProxyApi, type ProxyPolicy, type Refusal, type VettedRequest } from './proxy-common.js';

/** Tool types the client (the agent, in its sandbox) runs; `tool_search` only when it says so. */
const CLIENT_TOOLS = new Set(['function', 'custom', 'local_shell', 'shell', 'apply_patch', 'computer_use_preview']);

/** Fields that make OpenAI's side act on, or read from, the user's account. */
const SERVER_FIELDS = ['background', 'conversation', 'previous_response_id', 'prompt'];

export function vetOpenAi(method: string, rawUrl: string, headers: Headers, body: Buffer, policy: ProxyPolicy, maxTokensPerCall: number): VettedRequest | Refusal {
  if (!authorisedBy([bearerOf(headers)], policy.token)) return refuse(401, 'ACIA metering proxy: use the API key ACIA gave this agent (a Bearer token)');
  const url = originUrl(rawUrl);
  if (url === null || url.pathname !== '/v1/responses' || method !== 'POST') {
    return refuse(404, `ACIA metering proxy: ${method} ${url?.pathname ?? rawUrl} is not served (only POST /v1/responses)`);
  }
  const fields = jsonObject(body);
  if (typeof fields === 'string') return refuse(400, fields);
  if (!policy.allowServerTools) {
    const field = SERVER_FIELDS.find((f) => f in fields && fields[f] !== null && fields[f] !== false);
    if (field) return refuse(400, `ACIA metering proxy: "${field}" is not allowed (set meteringProxy.allowServerTools in your ACIA config to allow it)`);
    const tools = Array.isArray(fields.tools) ? (fields.tools as unknown[]) : [];
    const server = tools.find((t) => !clientTool(t));
    if (server !== undefined) {
      const type = typeof server === 'object' && server !== null ? (server as { type?: unknown }).type : server;
      return refuse(400, `ACIA metering proxy: the server-side tool type ${JSON.stringify(type)} is not allowed (set meteringProxy.allowServerTools in your ACIA config to allow it)`);
    }
  }
  const limit = positiveInt(fields.max_output_tokens);
  const sent = limit === undefined ? { ...fields, max_output_tokens: maxTokensPerCall } : fields;
  const out: Record<string, string> = {};
  const accept = headerOf(headers, 'accept');
  if (accept !== undefined) out.accept = accept;
  return { metered: true, path: 'responses', body: sent, headers: out, model: typeof fields.model === 'string' ? fields.model : 'unknown', maxOutputTokens: limit ?? maxTokensPerCall };
}

function clientTool(t: unknown): boolean {
  if (typeof t !== 'object' || t === null) return false;
  const { type, execution } = t as { type?: unknown; execution?: unknown };
  if (type === 'tool_search') return execution === 'client';
  return typeof type === 'string' && CLIENT_TOOLS.has(type);
}

/**
 * Usage from a Responses API reply: the final `response.completed` (or `.incomplete` / `.failed`) event of a
 * stream, or the response object itself. Its input count includes the cached part, which is priced apart.
 */
export function meterOpenAi(text: string, streamed: boolean): Metered {
  const usage = emptyUsage();
  let stopReason = 'unknown';
  let model = '';
  for (const ev of replyEvents(text, streamed)) {
    const e = ev as { type?: string; response?: unknown };
    const r = (streamed ? (typeof e.type === 'string' && e.type.startsWith('response.') ? e.response : undefined) : ev) as
      | { model?: unknown; status?: unknown; usage?: { input_tokens?: unknown; output_tokens?: unknown; input_tokens_details?: { cached_tokens?: unknown } }; incomplete_details?: { reason?: unknown } | null }
      | undefined;
    if (typeof r !== 'object' || r === null) continue;
    if (typeof r.model === 'string') model = r.model;
    if (typeof r.status === 'string') stopReason = r.status === 'incomplete' && typeof r.incomplete_details?.reason === 'string' ? `incomplete:${r.incomplete_details.reason}` : r.status;
    if (r.usage) {
      const cached = count(r.usage.input_tokens_details?.cached_tokens);
      usage.inputTokens = Math.max(0, count(r.usage.input_tokens) - cached);
      usage.cacheReadTokens = cached;
      usage.outputTokens = count(r.usage.output_tokens);
    }
  }
  return { usage, stopReason, model };
}

export const openAiApi: ProxyApi = {
  vet: vetOpenAi,
  meter: meterOpenAi,
  upstreamAuth: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
  errorBody: (status, type, message) => JSON.stringify({ error: { message, type, param: null, code: status === 401 ? 'invalid_api_key' : null } }),
  errorType: (status) => (status >= 500 ? 'server_error' : 'invalid_request_error'),
};

function refuse(status: number, message: string): Refusal {
  return { status, type: status === 401 ? 'invalid_request_error' : status === 404 ? 'not_found' : 'invalid_request_error', message };
}
