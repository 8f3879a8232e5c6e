// LlmClient for any OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, vLLM, LM Studio) on
// the official `openai` SDK: streamed calls, tool-call argument assembly, and our own bounded retries
// (the SDK's are off, as in anthropic-client.ts) decided by the shared HTTP failure table.
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError, type ClientOptions } from 'openai';
import { AciaError, errorMessage } from '../errors.js';
import { completeWithRetries, type Emit } from './chunks.js';
import { classifyHttpFailure } from './http-failure.js';
import { toChatParams, type TokenLimitParam } from './openai-mapping.js';
import { ChatStreamAssembly } from './openai-stream.js';
import { RetryableFailure, abortedError, parseRetryAfter, type LlmRetryPolicy, type Sleep } from './retry.js';
import { openEventStream, retrySettings, sdkTransport, type SdkClientOptions } from './sdk-options.js';
import type { LlmCallOptions, LlmClient, LlmRequest, LlmResponse } from './types.js';

export interface OpenAiClientOptions extends SdkClientOptions<NonNullable<ClientOptions['fetch']>> {
  /** Optional: local servers need none. Defaults to env OPENAI_API_KEY. */
  apiKey?: string | undefined;
  /** Defaults to env OPENAI_BASE_URL, then https://api.openai.com/v1. */
  baseURL?: string | undefined;
}

const AUTH_HINT = 'check OPENAI_API_KEY (and OPENAI_BASE_URL)';

export class OpenAiCompatibleClient implements LlmClient {
  readonly provider = 'openai';
  readonly baseURL: string;
  private readonly sdk: OpenAI;
  private readonly tokenLimit: TokenLimitParam;
  private readonly retry: { policy: LlmRetryPolicy; sleep: Sleep };

  constructor(options: OpenAiClientOptions = {}) {
    const env = options.env ?? process.env;
    this.baseURL = (options.baseURL ?? env['OPENAI_BASE_URL'] ?? 'https://api.openai.com/v1').replace(/\/+$/, '');
    this.tokenLimit = endpointHost(this.baseURL) === 'api.openai.com' ? 'max_completion_tokens' : 'max_tokens';
    const key = options.apiKey ?? env['OPENAI_API_KEY'];
    const hasKey = key !== undefined && key.trim() !== '';
    // Every SDK option that would otherwise fall back to process.env is given here, so `env` is the
    // only source. The SDK insists on a key; a keyless local server gets a placeholder the SDK never
    // sends, because the Authorization header is explicitly removed.
    this.sdk = new OpenAI({
      apiKey: hasKey ? key : 'unused',
      adminAPIKey: null,
      organization: env['OPENAI_ORG_ID'] ?? null,
      project: env['OPENAI_PROJECT_ID'] ?? null,
      webhookSecret: null,
      baseURL: this.baseURL,
      ...(hasKey ? {} : { defaultHeaders: { authorization: null } }),
      ...sdkTransport(options),
    });
    this.retry = retrySettings(options);
  }

  complete(request: LlmRequest, options?: LlmCallOptions): Promise<LlmResponse> {
    return completeWithRetries(request, options, this.retry, (emit, signal) => this.attempt(request, emit, signal));
  }

  private async attempt(request: LlmRequest, emit: Emit, signal: AbortSignal | undefined): Promise<LlmResponse> {
    const opened = await openEventStream(
      () => this.sdk.chat.completions.create(toChatParams(request, this.tokenLimit), { headers: { 'x-acia-caller': request.caller }, ...(signal ? { signal } : {}) }),
      (e) => this.classify(e, signal, false),
      { who: this.baseURL, hint: 'check OPENAI_BASE_URL points at an OpenAI-compatible /v1 endpoint' },
    );
    const stream = opened.data;
    const state = new ChatStreamAssembly(emit);
    try {
      for await (const chunk of stream) state.apply(chunk);
    } catch (e) {
      throw this.classify(e, signal, true);
    }
    // The SDK ends the iteration quietly when the caller aborts.
    if (signal?.aborted) throw abortedError();
    // A broken connection throws above; a body that ends cleanly but without a finish_reason was cut
    // by something in between. ([DONE] is consumed by the SDK; a finish_reason is the end marker here.)
    if (state.finish === null) throw new RetryableFailure('LLM_STREAM_CUT', `stream from ${this.baseURL} ended before a finish_reason`);
    const result: LlmResponse = {
      content: state.content(),
      stopReason: state.stopReason,
      usage: state.usage,
      model: state.model ?? request.model,
      requestId: opened.request_id,
    };
    emit({ kind: 'final', result });
    return result;
  }

  /** Maps an SDK or transport failure to a RetryableFailure or a final AciaError. */
  private classify(e: unknown, signal: AbortSignal | undefined, midStream: boolean): Error {
    if (e instanceof RetryableFailure || e instanceof AciaError) return e;
    if (signal?.aborted || e instanceof APIUserAbortError) return abortedError();
    if (e instanceof SyntaxError) {
      return new AciaError('LLM_BAD_RESPONSE', `stream from ${this.baseURL} carried a chunk that is not JSON: ${e.message}`, { cause: e });
    }
    if (e instanceof APIConnectionTimeoutError) {
      return new RetryableFailure('LLM_SERVER', `${this.baseURL} sent no response headers in time`, undefined, e);
    }
    // `instanceof` narrows to APIError<any, ...>; the declared type keeps status and headers typed.
    const api: APIError | undefined = e instanceof APIError ? e : undefined;
    if (api?.status === undefined) {
      // Connection failures, and `{"error": ...}` chunks inside a stream (an APIError without a status).
      if (api?.type === 'rate_limit_error') return new RetryableFailure('LLM_RATE_LIMITED', `${this.baseURL} rate limit: ${apiMessage(e)}`, undefined, e);
      if (api?.type === 'overloaded_error') return new RetryableFailure('LLM_OVERLOADED', `${this.baseURL} overloaded: ${apiMessage(e)}`, undefined, e);
      return midStream
        ? new RetryableFailure('LLM_STREAM_CUT', `stream from ${this.baseURL} broke: ${causeChain(e)}`, undefined, e)
        : new RetryableFailure('LLM_SERVER', `cannot reach ${this.baseURL}: ${causeChain(e)}`, undefined, e);
    }
    const headers = api.headers;
    return classifyHttpFailure({
      who: this.baseURL,
      status: api.status,
      message: apiMessage(api),
      retryAfterMs: parseRetryAfter((name) => headers?.get(name)),
      errorType: api.type,
      authHint: AUTH_HINT,
      cause: e,
    });
  }
}

/** A base URL that is no http(s) URL would fail every attempt alike; say so once, up front. */
function endpointHost(baseURL: string): string {
  let url: URL;
  try {
    url = new URL(baseURL);
  } catch {
    throw new AciaError('CONFIG_INVALID', `OpenAI-compatible base URL "${baseURL}" is not a URL`, { hint: 'set OPENAI_BASE_URL (or openaiBaseUrl) to e.g. http://127.0.0.1:11434/v1' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AciaError('CONFIG_INVALID', `OpenAI-compatible base URL "${baseURL}" is not http(s)`, { hint: 'set OPENAI_BASE_URL (or openaiBaseUrl) to e.g. http://127.0.0.1:11434/v1' });
  }
  return url.hostname;
}

/** The server's own words: `error.message`, a bare `error` string, or the head of a non-JSON body. */
function apiMessage(e: unknown): string {
  if (!(e instanceof APIError)) return errorMessage(e);
  const body: unknown = e.error;
  if (typeof body === 'string') return body.slice(0, 300);
  if (typeof body === 'object' && body !== null && 'message' in body && typeof body.message === 'string') return body.message;
  // The SDK prefixes the status; the table adds it again.
  return e.message.replace(/^\d{3} /, '').slice(0, 300);
}

/** "Connection error." alone says nothing: name the cause (ECONNREFUSED, ENOTFOUND, terminated, ...). */
function causeChain(e: unknown): string {
  const parts: string[] = [];
  // The SDK's own "Connection error." adds nothing to what caused it.
  const start = e instanceof APIConnectionError && e.cause instanceof Error ? e.cause : e;
  for (let c: unknown = start, depth = 0; c instanceof Error && depth < 4; c = c.cause, depth++) {
    const code = 'code' in c ? c.code : undefined;
    const text = typeof code === 'string' && !c.message.includes(code) ? `${c.message} (${code})` : c.message;
    if (text !== '' && !parts.includes(text)) parts.push(text);
  }
  return parts.length > 0 ? parts.join(': ') : errorMessage(e);
}
