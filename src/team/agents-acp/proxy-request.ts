// What the metering proxy lets an external agent ask of the model API with the user's key: a model call
// (and a free token count), nothing else. The path is judged after normalising it, the way the upstream's
// HTTP stack will read it; the body is parsed once and re-serialised, so what was checked is exactly what
// is sent; features that act on Anthropic's side (server tools, MCP connectors, files, batches, betas
// that enable them or are priced differently) need the user's config to allow them.
import { timingSafeEqual } from 'node:crypto';

export type ProxyEndpoint = 'messages' | 'count_tokens';

export interface VettedRequest {
  endpoint: ProxyEndpoint;
  /** Where to send it, relative to the upstream base URL (`v1/messages`, with an allowed query). */
  path: string;
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

export interface Refusal {
  status: number;
  type: 'authentication_error' | 'not_found_error' | 'invalid_request_error';
  message: string;
}

export interface ProxyPolicy {
  /** The per-task token the agent was given as its API key. */
  token: string;
  /** `anthropic-beta` values let through besides the built-in safe ones. */
  allowBetas: readonly string[];
  /** Server-side tools, `mcp_servers` and `container` (off unless the user's config allows them). */
  allowServerTools: boolean;
}

const ENDPOINTS: Record<string, ProxyEndpoint> = { '/v1/messages': 'messages', '/v1/messages/count_tokens': 'count_tokens' };

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
export function authorised(headers: Record<string, string | string[] | undefined>, token: string): boolean {
  const bearer = /^Bearer\s+(.+)$/i.exec(headerOf(headers, 'authorization') ?? '')?.[1];
  const given = headerOf(headers, 'x-api-key') ?? bearer;
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The request as it may go upstream, or why not. `rawUrl` is the request target as received. */
export function vetRequest(method: string, rawUrl: string, headers: Record<string, string | string[] | undefined>, body: Buffer, policy: ProxyPolicy): VettedRequest | Refusal {
  if (!authorised(headers, policy.token)) return refuse(401, 'authentication_error', 'ACIA metering proxy: use the API key ACIA gave this agent');
  // Origin-form only: an absolute or authority-form target names another host.
  if (!rawUrl.startsWith('/') || rawUrl.startsWith('//')) return refuse(404, 'not_found_error', 'ACIA metering proxy: only POST /v1/messages is served');
  let url: URL;
  try {
    url = new URL(rawUrl, 'http://acia.invalid');
  } catch {
    return refuse(404, 'not_found_error', 'ACIA metering proxy: only POST /v1/messages is served');
  }
  // Dot segments (also percent-encoded ones) are resolved here, as fetch and the upstream would.
  const endpoint = ENDPOINTS[url.pathname];
  if (endpoint === undefined || method !== 'POST') return refuse(404, 'not_found_error', `ACIA metering proxy: ${method} ${url.pathname} is not served (only POST /v1/messages and /v1/messages/count_tokens)`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return refuse(400, 'invalid_request_error', 'ACIA metering proxy: the request body is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return refuse(400, 'invalid_request_error', 'ACIA metering proxy: the request body is not a JSON object');
  const fields = parsed as Record<string, unknown>;
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
  return { endpoint, path: `${url.pathname.slice(1)}${query}`, body: fields, headers: out };
}

export function isRefusal(v: VettedRequest | Refusal): v is Refusal {
  return 'status' in v;
}

function refuse(status: number, type: Refusal['type'], message: string): Refusal {
  return { status, type, message };
}

function headerOf(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}
