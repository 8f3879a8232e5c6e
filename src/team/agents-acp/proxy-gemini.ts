// The Gemini API as the metering proxy serves it (Gemini CLI `--acp`, and other agents on it):
// `POST /<version>/models/<model>:generateContent`, `:streamGenerateContent` (model calls) and `:countTokens`
// (free), from the holder of the task's token (`x-goog-api-key`, or `?key=`, which never goes upstream).
// Tools Google runs on its side (Search and Maps grounding, code execution, URL context, file search) and
// a cached context of the user's need the user's config to allow them. A call without an output limit gets
// the run's per-call one; a thinking budget counts on top of it in the reservation.
import { authorisedBy, count, emptyUsage, headerOf, jsonObject, originUrl, positiveInt, replyEvents, type Headers, type Metered, type ProxyApi, type ProxyPolicy, type Refusal, type VettedRequest } from './proxy-common.js';

const PATH = /^\/(v1|v1beta|v1alpha)\/models\/([A-Za-z0-9][A-Za-z0-9._-]*):(generateContent|streamGenerateContent|countTokens)$/;

/** Body fields that read state in the user's account (a cached context). */
const SERVER_FIELDS = ['cachedContent'];

export function vetGemini(method: string, rawUrl: string, headers: Headers, body: Buffer, policy: ProxyPolicy, maxTokensPerCall: number): VettedRequest | Refusal {
  const url = originUrl(rawUrl);
  if (!authorisedBy([headerOf(headers, 'x-goog-api-key'), url?.searchParams.get('key') ?? undefined], policy.token)) {
    return refuse(401, 'ACIA metering proxy: use the API key ACIA gave this agent');
  }
  const m = url === null ? null : PATH.exec(url.pathname);
  if (url === null || m === null || method !== 'POST') {
    return refuse(404, `ACIA metering proxy: ${method} ${url?.pathname ?? rawUrl} is not served (only POST /v1beta/models/<model>:generateContent, :streamGenerateContent and :countTokens)`);
  }
  const [version = '', model = '', verb = ''] = m.slice(1);
  const fields = jsonObject(body);
  if (typeof fields === 'string') return refuse(400, fields);
  const metered = verb !== 'countTokens';
  if (metered && !policy.allowServerTools) {
    const field = SERVER_FIELDS.find((f) => f in fields);
    if (field) return refuse(400, `ACIA metering proxy: "${field}" is not allowed (set meteringProxy.allowServerTools in your ACIA config to allow it)`);
    const tools = Array.isArray(fields.tools) ? (fields.tools as unknown[]) : [];
    const server = tools.flatMap((t) => (typeof t === 'object' && t !== null ? Object.keys(t).filter((k) => k !== 'functionDeclarations') : ['(not an object)']))[0];
    if (server !== undefined) return refuse(400, `ACIA metering proxy: the server-side tool ${JSON.stringify(server)} is not allowed (set meteringProxy.allowServerTools in your ACIA config to allow it)`);
  }
  const config = typeof fields.generationConfig === 'object' && fields.generationConfig !== null ? (fields.generationConfig as Record<string, unknown>) : {};
  const limit = positiveInt(config.maxOutputTokens);
  const thinking = typeof config.thinkingConfig === 'object' && config.thinkingConfig !== null ? (positiveInt((config.thinkingConfig as Record<string, unknown>).thinkingBudget) ?? 0) : 0;
  const sent = metered && limit === undefined ? { ...fields, generationConfig: { ...config, maxOutputTokens: maxTokensPerCall } } : fields;
  // Only the stream format is kept from the query: the key travels upstream as the user's, in a header.
  const query = verb === 'streamGenerateContent' && url.searchParams.get('alt') === 'sse' ? '?alt=sse' : '';
  return { metered, path: `${version}/models/${model}:${verb}${query}`, body: sent, headers: {}, model, maxOutputTokens: (limit ?? maxTokensPerCall) + thinking };
}

/**
 * Usage from a Gemini reply: `usageMetadata` of the last chunk that has one (chunks carry running totals),
 * or of the whole response. Thinking tokens are billed as output; a cached part of the prompt apart.
 */
export function meterGemini(text: string, streamed: boolean): Metered {
  const usage = emptyUsage();
  let stopReason = 'unknown';
  let model = '';
  const events = replyEvents(text, streamed).flatMap((e) => (Array.isArray(e) ? (e as unknown[]) : [e]));
  for (const ev of events) {
    const e = ev as { modelVersion?: unknown; candidates?: { finishReason?: unknown }[]; usageMetadata?: Record<string, unknown> };
    if (typeof e !== 'object' || e === null) continue;
    if (typeof e.modelVersion === 'string') model = e.modelVersion;
    const finish = Array.isArray(e.candidates) ? e.candidates.find((c) => typeof c?.finishReason === 'string')?.finishReason : undefined;
    if (typeof finish === 'string') stopReason = finish;
    const u = e.usageMetadata;
    if (typeof u !== 'object' || u === null) continue;
    const cached = count(u.cachedContentTokenCount);
    usage.inputTokens = Math.max(0, count(u.promptTokenCount) + count(u.toolUsePromptTokenCount) - cached);
    usage.cacheReadTokens = cached;
    usage.outputTokens = count(u.candidatesTokenCount) + count(u.thoughtsTokenCount);
  }
  return { usage, stopReason, model };
}

const STATUS: Record<number, string> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 404: 'NOT_FOUND', 500: 'INTERNAL', 502: 'UNAVAILABLE' };

export const geminiApi: ProxyApi = {
  vet: vetGemini,
  meter: meterGemini,
  upstreamAuth: (apiKey) => ({ 'x-goog-api-key': apiKey }),
  errorBody: (status, type, message) => JSON.stringify({ error: { code: status, message, status: type } }),
  errorType: (status) => STATUS[status] ?? 'INTERNAL',
};

function refuse(status: number, message: string): Refusal {
  return { status, type: STATUS[status] ?? 'INVALID_ARGUMENT', message };
}
