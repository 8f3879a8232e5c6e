// LlmClient for any OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, vLLM, LM Studio) on
// global fetch: streamed SSE, tool-call argument assembly, and the shared retry and error mapping.
import { AciaError, errorMessage } from '../errors.js';
import { completeWithRetries, type Emit } from './chunks.js';
import { classifyHttpFailure } from './http-failure.js';
import { mapFinishReason, toChatBody } from './openai-mapping.js';
import {
  DEFAULT_RETRY_POLICY,
  RetryableFailure,
  abortedError,
  parseRetryAfter,
  realSleep,
  type LlmRetryPolicy,
  type Sleep,
} from './retry.js';
import { readSse } from './sse.js';
import { parseToolInput } from './tool-input.js';
import type { AssistantBlock, LlmCallOptions, LlmClient, LlmRequest, LlmResponse, Usage } from './types.js';

export interface OpenAiClientOptions {
  /** Optional: local servers need none. Defaults to env OPENAI_API_KEY. */
  apiKey?: string | undefined;
  /** Defaults to env OPENAI_BASE_URL, then https://api.openai.com/v1. */
  baseURL?: string | undefined;
  maxRetries?: number;
  sleep?: Sleep;
  fetch?: typeof fetch;
  env?: Readonly<Record<string, string | undefined>>;
  retry?: Partial<Omit<LlmRetryPolicy, 'maxRetries'>>;
}

interface ToolCallBuild {
  id: string;
  name: string;
  args: string;
}

export class OpenAiCompatibleClient implements LlmClient {
  readonly provider = 'openai';
  readonly baseURL: string;
  private readonly apiKey: string | undefined;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: Sleep;
  private readonly policy: LlmRetryPolicy;

  constructor(options: OpenAiClientOptions = {}) {
    const env = options.env ?? process.env;
    this.baseURL = (options.baseURL ?? env['OPENAI_BASE_URL'] ?? 'https://api.openai.com/v1').replace(/\/+$/, '');
    const key = options.apiKey ?? env['OPENAI_API_KEY'];
    this.apiKey = key === undefined || key.trim() === '' ? undefined : key;
    this.fetchImpl = options.fetch ?? fetch;
    this.sleep = options.sleep ?? realSleep;
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.retry, maxRetries: options.maxRetries ?? DEFAULT_RETRY_POLICY.maxRetries };
  }

  complete(request: LlmRequest, options?: LlmCallOptions): Promise<LlmResponse> {
    return completeWithRetries(request, options, { policy: this.policy, sleep: this.sleep }, (emit, signal) => this.attempt(request, emit, signal));
  }

  private async attempt(request: LlmRequest, emit: Emit, signal: AbortSignal | undefined): Promise<LlmResponse> {
    let res: Response;
    try {
      res = await this.fetchImpl(`${this.baseURL}/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-acia-caller': request.caller,
          ...(this.apiKey !== undefined ? { authorization: `Bearer ${this.apiKey}` } : {}),
        },
        body: JSON.stringify(toChatBody(request, true)),
        ...(signal ? { signal } : {}),
      });
    } catch (e) {
      if (signal?.aborted) throw abortedError();
      throw new RetryableFailure('LLM_SERVER', `cannot reach ${this.baseURL}: ${errorMessage(e)}`, undefined, e);
    }
    const requestId = res.headers.get('x-request-id');
    if (!res.ok) throw await this.httpError(res);
    const contentType = res.headers.get('content-type') ?? '';
    if (!contentType.includes('text/event-stream') || res.body === null) {
      await res.body?.cancel().catch(() => undefined);
      throw new AciaError('LLM_BAD_RESPONSE', `${this.baseURL} answered with "${contentType || 'no content type'}" instead of an event stream`, {
        hint: 'check OPENAI_BASE_URL points at an OpenAI-compatible /v1 endpoint',
      });
    }
    let text = '';
    const calls = new Map<number, ToolCallBuild>();
    let finish: string | null = null;
    let done = false;
    let usage: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    let model: string | undefined;
    try {
      for await (const ev of readSse(res.body)) {
        if (ev.data === '[DONE]') {
          done = true;
          break;
        }
        const chunk = parseChunk(ev.data);
        if (typeof chunk.model === 'string') model = chunk.model;
        if (chunk.usage) usage = mapUsage(chunk.usage);
        const choice = chunk.choices?.[0];
        if (choice === undefined) continue;
        const delta = choice.delta ?? {};
        if (typeof delta.content === 'string' && delta.content !== '') {
          text += delta.content;
          emit({ kind: 'token', text: delta.content });
        }
        for (const tc of delta.tool_calls ?? []) {
          const index = typeof tc.index === 'number' ? tc.index : 0;
          const build = calls.get(index) ?? { id: '', name: '', args: '' };
          if (typeof tc.id === 'string' && tc.id !== '') build.id = tc.id;
          if (typeof tc.function?.name === 'string') build.name += tc.function.name;
          if (typeof tc.function?.arguments === 'string' && tc.function.arguments !== '') {
            build.args += tc.function.arguments;
            emit({ kind: 'json_partial', toolUseId: build.id, partialJson: tc.function.arguments });
          }
          calls.set(index, build);
        }
        if (typeof choice.finish_reason === 'string') finish = choice.finish_reason;
      }
    } catch (e) {
      if (signal?.aborted) throw abortedError();
      if (e instanceof AciaError || e instanceof RetryableFailure) throw e;
      throw new RetryableFailure('LLM_STREAM_CUT', `stream from ${this.baseURL} broke: ${errorMessage(e)}`, undefined, e);
    } finally {
      await res.body.cancel().catch(() => undefined);
    }
    if (signal?.aborted) throw abortedError();
    // [DONE] is the end marker; a finish_reason without it is accepted from lenient local servers.
    if (!done && finish === null) throw new RetryableFailure('LLM_STREAM_CUT', `stream from ${this.baseURL} ended before [DONE]`);
    const content: AssistantBlock[] = text === '' ? [] : [{ type: 'text', text }];
    for (const [index, c] of [...calls.entries()].sort(([a], [b]) => a - b)) {
      const id = c.id === '' ? `call_${index}` : c.id;
      const input = parseToolInput(c.name, c.args);
      emit({ kind: 'tool_call', toolUseId: id, toolName: c.name, input });
      content.push({ type: 'tool_use', id, name: c.name, input });
    }
    const result: LlmResponse = {
      content,
      stopReason: mapFinishReason(finish, calls.size > 0),
      usage,
      model: model ?? request.model,
      requestId,
    };
    emit({ kind: 'final', result });
    return result;
  }

  private async httpError(res: Response): Promise<Error> {
    const body = await res.text().catch(() => '');
    let message = body.slice(0, 300);
    try {
      const parsed = JSON.parse(body) as { error?: { message?: unknown } | string };
      const m = typeof parsed.error === 'string' ? parsed.error : parsed.error?.message;
      if (typeof m === 'string') message = m;
    } catch {
      // Not JSON: keep the raw head of the body.
    }
    const status = res.status;
    const retryAfter = parseRetryAfter((n) => res.headers.get(n));
    return classifyHttpFailure({ who: this.baseURL, status, message, retryAfterMs: retryAfter, authHint: 'check OPENAI_API_KEY (and OPENAI_BASE_URL)' });
  }
}

interface ChatChunk {
  model?: unknown;
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown; prompt_tokens_details?: { cached_tokens?: unknown } | null } | null;
  choices?: {
    delta?: {
      content?: unknown;
      tool_calls?: { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } }[];
    };
    finish_reason?: unknown;
  }[];
}

function parseChunk(data: string): ChatChunk {
  let v: unknown;
  try {
    v = JSON.parse(data);
  } catch {
    throw new AciaError('LLM_BAD_RESPONSE', `stream chunk is not JSON: ${data.slice(0, 120)}`);
  }
  if (typeof v !== 'object' || v === null) throw new AciaError('LLM_BAD_RESPONSE', 'stream chunk is not a JSON object');
  return v;
}

function mapUsage(u: NonNullable<ChatChunk['usage']>): Usage {
  const num = (x: unknown): number => (typeof x === 'number' && Number.isFinite(x) ? x : 0);
  const cached = num(u.prompt_tokens_details?.cached_tokens);
  return { inputTokens: Math.max(0, num(u.prompt_tokens) - cached), outputTokens: num(u.completion_tokens), cacheReadTokens: cached, cacheWriteTokens: 0 };
}
