// What the two SDK-backed clients (anthropic-client.ts, openai-client.ts) take and set alike: the
// retry options, the SDK options that hand retries, transport and logging to us, and how a streamed
// request is started and its answer checked.
import { AciaError } from '../errors.js';
import { DEFAULT_RETRY_POLICY, realSleep, type LlmRetryPolicy, type Sleep } from './retry.js';

/** A client's options besides its endpoint and key; `Fetch` is the SDK's own fetch type. */
export interface SdkClientOptions<Fetch> {
  /** Retries after the first attempt (default 4, so at most 5 tries). */
  maxRetries?: number;
  sleep?: Sleep;
  fetch?: Fetch;
  env?: Readonly<Record<string, string | undefined>>;
  /** How long to wait for the response headers of one attempt (the SDK's default: 10 minutes). */
  timeoutMs?: number;
  retry?: Partial<Omit<LlmRetryPolicy, 'maxRetries'>>;
}

/** The policy and sleep completeWithRetries runs under: DEFAULT_RETRY_POLICY with what the options change. */
export function retrySettings(options: SdkClientOptions<unknown>): { policy: LlmRetryPolicy; sleep: Sleep } {
  return {
    policy: { ...DEFAULT_RETRY_POLICY, ...options.retry, maxRetries: options.maxRetries ?? DEFAULT_RETRY_POLICY.maxRetries },
    sleep: options.sleep ?? realSleep,
  };
}

const SILENT_LOGGER = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined };

/** The SDK's own retries off (ours decide), the given fetch and timeout, and no logging of its own. */
export function sdkTransport<Fetch>(options: SdkClientOptions<Fetch>): { maxRetries: 0; fetch?: Fetch; timeout?: number; logger: typeof SILENT_LOGGER; logLevel: 'off' } {
  return {
    maxRetries: 0,
    ...(options.fetch !== undefined ? { fetch: options.fetch } : {}),
    ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
    logger: SILENT_LOGGER,
    logLevel: 'off',
  };
}

/** What an SDK's request promise resolves to with `.withResponse()`: the stream, and the HTTP response. */
interface Opened {
  data: { controller: AbortController };
  response: { headers: { get(name: string): string | null } };
}

/**
 * Starts a streamed request and checks that the endpoint answered with an event stream: a failure to
 * start is the client's to classify; another content type (a proxy's HTML page, a wrong base URL's
 * JSON) aborts the stream and is LLM_BAD_RESPONSE, "<who> answered with ... instead of an event stream".
 */
export async function openEventStream<O extends Opened>(start: () => { withResponse(): Promise<O> }, classify: (e: unknown) => Error, badType: { who: string; hint: string }): Promise<O> {
  let opened;
  try {
    opened = await start().withResponse();
  } catch (e) {
    throw classify(e);
  }
  const contentType = opened.response.headers.get('content-type') ?? '';
  if (!contentType.includes('text/event-stream')) {
    opened.data.controller.abort();
    throw new AciaError('LLM_BAD_RESPONSE', `${badType.who} answered with "${contentType || 'no content type'}" instead of an event stream`, { hint: badType.hint });
  }
  return opened;
}
