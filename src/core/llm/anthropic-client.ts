// LlmClient on the official Anthropic SDK: streamed Messages calls with tool-input assembly, prompt
// caching, and our own bounded retries (the SDK's are off) mapped to typed AciaErrors.
// The SDK's base client with the Messages resource alone: `Anthropic` itself constructs every resource
// (beta, files, skills, ...), and importing it put a 1 MB chunk between start-up and the first request.
import { BaseAnthropic, type ClientOptions } from '@anthropic-ai/sdk/client';
import { APIError, APIUserAbortError } from '@anthropic-ai/sdk/core/error';
import { Messages, type RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages/messages';
import { AciaError, errorMessage } from '../errors.js';
import { mapStopReason, toAnthropicParams } from './anthropic-mapping.js';
import { completeWithRetries, type Emit } from './chunks.js';
import { classifyHttpFailure } from './http-failure.js';
import { parseToolInput } from './tool-input.js';
import { RetryableFailure, abortedError, parseRetryAfter, type LlmRetryPolicy, type Sleep } from './retry.js';
import { openEventStream, retrySettings, sdkTransport, type SdkClientOptions } from './sdk-options.js';
import type { AssistantBlock, LlmCallOptions, LlmClient, LlmRequest, LlmResponse, StopReason, Usage } from './types.js';

export interface AnthropicClientOptions extends SdkClientOptions<NonNullable<ClientOptions['fetch']>> {
  apiKey?: string | undefined;
  /** Defaults to env ANTHROPIC_BASE_URL, then the SDK's default. */
  baseURL?: string | undefined;
}

class MessagesOnly extends BaseAnthropic {
  readonly messages = new Messages(this);
}

export class AnthropicClient implements LlmClient {
  readonly provider = 'anthropic';
  private readonly sdk: MessagesOnly;
  private readonly retry: { policy: LlmRetryPolicy; sleep: Sleep };

  constructor(options: AnthropicClientOptions = {}) {
    const env = options.env ?? process.env;
    const apiKey = options.apiKey ?? env['ANTHROPIC_API_KEY'];
    if (apiKey === undefined || apiKey.trim() === '') {
      throw new AciaError('LLM_AUTH', 'no Anthropic API key: ANTHROPIC_API_KEY is not set', {
        hint: 'export ANTHROPIC_API_KEY=..., or run offline with `--model scripted:<file>` or `acia demo`',
      });
    }
    const baseURL = options.baseURL ?? env['ANTHROPIC_BASE_URL'];
    this.sdk = new MessagesOnly({
      apiKey,
      ...(baseURL !== undefined && baseURL !== '' ? { baseURL } : {}),
      ...sdkTransport(options),
      openTelemetry: false,
    });
    this.retry = retrySettings(options);
  }

  complete(request: LlmRequest, options?: LlmCallOptions): Promise<LlmResponse> {
    return completeWithRetries(request, options, this.retry, (emit, signal) => this.attempt(request, emit, signal));
  }

  private async attempt(request: LlmRequest, emit: Emit, signal: AbortSignal | undefined): Promise<LlmResponse> {
    const opened = await openEventStream(
      () => this.sdk.messages.create(toAnthropicParams(request), { headers: { 'x-acia-caller': request.caller }, ...(signal ? { signal } : {}) }),
      (e) => classify(e, signal),
      { who: 'Anthropic endpoint', hint: 'check ANTHROPIC_BASE_URL points at the Messages API' },
    );
    const { data: stream, response } = opened;
    const requestId = opened.request_id ?? response.headers.get('request-id');
    const state = new StreamAssembly(emit);
    try {
      for await (const event of stream) state.apply(event);
    } catch (e) {
      if (e instanceof AciaError) throw e;
      throw classify(e, signal, true);
    }
    if (signal?.aborted) throw abortedError();
    if (!state.stopped) throw new RetryableFailure('LLM_STREAM_CUT', 'Anthropic stream ended before message_stop');
    const result: LlmResponse = {
      content: state.content(),
      stopReason: state.stopReason,
      usage: state.usage,
      model: state.model ?? request.model,
      requestId: requestId ?? null,
    };
    emit({ kind: 'final', result });
    return result;
  }
}

type Building = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; json: string; input?: unknown };

/** Folds stream events into content blocks, emitting chunks as pieces arrive. */
class StreamAssembly {
  stopped = false;
  stopReason: StopReason = 'other';
  model: string | undefined;
  usage: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  private readonly blocks = new Map<number, Building>();

  constructor(private readonly emit: Emit) {}

  apply(event: RawMessageStreamEvent): void {
    switch (event.type) {
      case 'message_start': {
        this.model = event.message.model;
        const u = event.message.usage;
        this.usage = {
          inputTokens: u.input_tokens,
          outputTokens: u.output_tokens,
          cacheReadTokens: u.cache_read_input_tokens ?? 0,
          cacheWriteTokens: u.cache_creation_input_tokens ?? 0,
        };
        return;
      }
      case 'content_block_start': {
        const b = event.content_block;
        if (b.type === 'text') {
          this.blocks.set(event.index, { type: 'text', text: b.text });
          if (b.text !== '') this.emit({ kind: 'token', text: b.text });
        } else if (b.type === 'tool_use') {
          this.blocks.set(event.index, { type: 'tool_use', id: b.id, name: b.name, json: '' });
        }
        return;
      }
      case 'content_block_delta': {
        const b = this.blocks.get(event.index);
        if (event.delta.type === 'text_delta' && b?.type === 'text') {
          b.text += event.delta.text;
          this.emit({ kind: 'token', text: event.delta.text });
        } else if (event.delta.type === 'input_json_delta' && b?.type === 'tool_use') {
          b.json += event.delta.partial_json;
          this.emit({ kind: 'json_partial', toolUseId: b.id, partialJson: event.delta.partial_json });
        }
        return;
      }
      case 'content_block_stop': {
        const b = this.blocks.get(event.index);
        if (b?.type === 'tool_use') {
          b.input = parseToolInput(b.name, b.json);
          this.emit({ kind: 'tool_call', toolUseId: b.id, toolName: b.name, input: b.input });
        }
        return;
      }
      case 'message_delta': {
        this.stopReason = mapStopReason(event.delta.stop_reason);
        const u = event.usage;
        this.usage = {
          inputTokens: u.input_tokens ?? this.usage.inputTokens,
          outputTokens: u.output_tokens,
          cacheReadTokens: u.cache_read_input_tokens ?? this.usage.cacheReadTokens,
          cacheWriteTokens: u.cache_creation_input_tokens ?? this.usage.cacheWriteTokens,
        };
        return;
      }
      case 'message_stop':
        this.stopped = true;
        return;
    }
  }

  content(): AssistantBlock[] {
    return [...this.blocks.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, b]): AssistantBlock => (b.type === 'text' ? { type: 'text', text: b.text } : { type: 'tool_use', id: b.id, name: b.name, input: b.input ?? {} }));
  }
}

/** Maps an SDK/transport failure to a RetryableFailure or a final AciaError. */
function classify(e: unknown, signal: AbortSignal | undefined, midStream = false): Error {
  if (e instanceof RetryableFailure || e instanceof AciaError) return e;
  if (signal?.aborted || e instanceof APIUserAbortError) return abortedError();
  if (e instanceof SyntaxError) {
    return new AciaError('LLM_BAD_RESPONSE', `Anthropic stream carried a non-JSON event: ${e.message}`, { cause: e });
  }
  if (!(e instanceof APIError)) {
    return new RetryableFailure('LLM_STREAM_CUT', `Anthropic ${midStream ? 'stream broke' : 'request failed'}: ${errorMessage(e)}`, undefined, e);
  }
  const status = (e as APIError<number | undefined>).status;
  const message = e.apiMessage ?? e.message;
  const header = headerReader(e.headers as unknown);
  const retryAfter = parseRetryAfter(header);
  if (status === undefined) {
    // Connection errors and `event: error` frames inside a stream.
    if (e.type === 'overloaded_error') return new RetryableFailure('LLM_OVERLOADED', `Anthropic overloaded: ${message}`, retryAfter, e);
    if (e.type === 'rate_limit_error') return new RetryableFailure('LLM_RATE_LIMITED', `Anthropic rate limit: ${message}`, retryAfter, e);
    return new RetryableFailure(midStream ? 'LLM_STREAM_CUT' : 'LLM_SERVER', `Anthropic connection failed: ${message}`, undefined, e);
  }
  return classifyHttpFailure({
    who: 'Anthropic',
    status,
    message,
    retryAfterMs: retryAfter,
    errorType: e.type ?? undefined,
    authHint: 'check ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL if you use a proxy)',
    cause: e,
  });
}

/** The SDK types error headers loosely; read them defensively. */
function headerReader(headers: unknown): (name: string) => string | null {
  if (typeof headers !== 'object' || headers === null) return () => null;
  const get = (headers as { get?: unknown }).get;
  if (typeof get !== 'function') return () => null;
  return (name) => {
    const v: unknown = get.call(headers, name);
    return typeof v === 'string' ? v : null;
  };
}
