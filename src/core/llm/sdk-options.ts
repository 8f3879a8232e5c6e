// What the two SDK-backed clients (anthropic-client.ts, openai-client.ts) take and set alike: the
// retry options, and the SDK options that hand retries, transport and logging to us.
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
