// What every model API the metering proxy serves has in common: the shape of a checked request and of
// a refusal, the agent's token check, the request target read as the upstream will read it, the body
// parsed once (what was checked is exactly what is sent), and usage read from an SSE or JSON reply.
import { timingSafeEqual } from 'node:crypto';
import type { Usage } from '../../core/llm/types.js';

/** The model APIs an external agent can speak to ACIA's proxy. */
export type AgentApi = 'anthropic' | 'openai' | 'gemini';

export interface ProxyPolicy {
  /** The per-task token the agent was given as its API key. */
  token: string;
  /** `anthropic-beta` values let through besides the built-in safe ones. */
  allowBetas: readonly string[];
  /** Server-side tools and features that make the provider's side act (off unless the user's config allows them). */
  allowServerTools: boolean;
}

export interface VettedRequest {
  /** A model call (reserved, metered and recorded), or a free one (a token count). */
  metered: boolean;
  /** Where to send it, relative to the upstream base URL, with an allowed query. */
  path: string;
  body: Record<string, unknown>;
  /** Headers to forward (the user's key is added by the proxy). */
  headers: Record<string, string>;
  /** The model the call names ('unknown' when it names none). */
  model: string;
  /** The most output the call can produce, after any cap ACIA set: its reservation's worst case. */
  maxOutputTokens: number;
}

export interface Refusal {
  status: number;
  /** The error type, in the API's own words (`authentication_error`, `UNAUTHENTICATED`, ...). */
  type: string;
  message: string;
}

export interface Metered {
  usage: Usage;
  stopReason: string;
  /** The model the reply names; '' when it names none. */
  model: string;
}

/** One model API as the proxy serves it. */
export interface ProxyApi {
  /** The request as it may go upstream, or why not. `maxTokensPerCall` caps a call that sets no limit. */
  vet(method: string, rawUrl: string, headers: Headers, body: Buffer, policy: ProxyPolicy, maxTokensPerCall: number): VettedRequest | Refusal;
  /** Usage, stop reason and model from a reply, streamed (SSE) or whole. */
  meter(text: string, streamed: boolean): Metered;
  /** The headers that carry the user's key upstream. */
  upstreamAuth(apiKey: string): Record<string, string>;
  /** An error body the agent's SDK reads as this API's error. */
  errorBody(status: number, type: string, message: string): string;
  /** The error type to answer with for a status (a budget stop is a 400, a lost upstream a 502). */
  errorType(status: number): string;
}

export type Headers = Record<string, string | string[] | undefined>;

export function headerOf(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

/** Whether any of the places the API lets a key go holds the task's token (compared in constant time). */
export function authorisedBy(given: readonly (string | undefined)[], token: string): boolean {
  const b = Buffer.from(token);
  return given.some((g) => {
    if (g === undefined) return false;
    const a = Buffer.from(g);
    return a.length === b.length && timingSafeEqual(a, b);
  });
}

/** The bearer token of an `Authorization` header. */
export function bearerOf(headers: Headers): string | undefined {
  return /^Bearer\s+(.+)$/i.exec(headerOf(headers, 'authorization') ?? '')?.[1];
}

/**
 * The request target as fetch and the upstream will read it: origin-form only (an absolute or
 * authority-form target names another host), dot segments (also percent-encoded ones) resolved.
 */
export function originUrl(rawUrl: string): URL | null {
  if (!rawUrl.startsWith('/') || rawUrl.startsWith('//')) return null;
  try {
    return new URL(rawUrl, 'http://acia.invalid');
  } catch {
    return null;
  }
}

/** The body as one JSON object, or what is wrong with it. */
export function jsonObject(body: Buffer): Record<string, unknown> | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return 'ACIA metering proxy: the request body is not JSON';
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'ACIA metering proxy: the request body is not a JSON object';
  return parsed as Record<string, unknown>;
}

export function isRefusal<T extends object>(v: T | Refusal): v is Refusal {
  return 'status' in v && 'message' in v && !('body' in v);
}

/** The `data:` payloads of an SSE text that parse as JSON, or the whole text as one JSON value. */
export function replyEvents(text: string, streamed: boolean): unknown[] {
  const out: unknown[] = [];
  const take = (s: string) => {
    try {
      out.push(JSON.parse(s));
    } catch {
      /* a keep-alive, `[DONE]` or a cut line: nothing to meter */
    }
  };
  if (!streamed) take(text);
  else for (const line of text.split('\n')) if (line.startsWith('data:')) take(line.slice(5).trim());
  return out;
}

/** A positive integer field, or undefined. */
export function positiveInt(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined;
}

export function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0;
}

export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}
