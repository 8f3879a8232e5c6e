// The one retry loop every model client shares: bounded attempts, exponential backoff with jitter,
// `retry-after` honoured, abort-aware sleep injected so tests never wait.
import { AciaError, type ErrorCode } from '../errors.js';

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export const realSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortedError());
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortedError());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

export function abortedError(): AciaError {
  return new AciaError('ABORTED', 'model call aborted');
}

export interface LlmRetryPolicy {
  /** Retries after the first attempt: 4 means at most 5 attempts. */
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A server's retry-after above this is clamped, so one header cannot park a run for an hour. */
  maxRetryAfterMs: number;
  random: () => number;
}

export const DEFAULT_RETRY_POLICY: LlmRetryPolicy = {
  maxRetries: 4,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 60_000,
  random: Math.random,
};

/** A failure worth another attempt; `code` is what the caller sees once attempts run out. */
export class RetryableFailure extends Error {
  readonly code: ErrorCode;
  readonly retryAfterMs: number | undefined;
  constructor(code: ErrorCode, message: string, retryAfterMs?: number, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'RetryableFailure';
    this.code = code;
    this.retryAfterMs = retryAfterMs;
  }
}

export interface RetryInfo {
  attempt: number;
  delayMs: number;
  code: ErrorCode;
  message: string;
}

export interface RetryOptions {
  policy: LlmRetryPolicy;
  sleep: Sleep;
  signal?: AbortSignal | undefined;
  onRetry?: ((info: RetryInfo) => void) | undefined;
}

export async function withRetries<T>(attempt: (n: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const { policy, sleep, signal } = options;
  for (let n = 0; ; n++) {
    if (signal?.aborted) throw abortedError();
    try {
      return await attempt(n);
    } catch (e) {
      if (!(e instanceof RetryableFailure)) throw e;
      if (signal?.aborted) throw abortedError();
      if (n >= policy.maxRetries) {
        throw new AciaError(e.code, `${e.message} (gave up after ${n + 1} attempts)`, { cause: e });
      }
      const delayMs = retryDelayMs(n, e.retryAfterMs, policy);
      options.onRetry?.({ attempt: n + 1, delayMs, code: e.code, message: e.message });
      await sleep(delayMs, signal);
    }
  }
}

export function retryDelayMs(n: number, retryAfterMs: number | undefined, policy: LlmRetryPolicy): number {
  if (retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0) {
    return Math.min(retryAfterMs, policy.maxRetryAfterMs);
  }
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** n);
  // Full jitter on the upper half keeps parallel agents from retrying in lockstep.
  return Math.round(backoff * (0.5 + policy.random() * 0.5));
}

/** `retry-after` is seconds or an HTTP date; `retry-after-ms` (Anthropic, OpenAI) wins when present. */
export function parseRetryAfter(get: (name: string) => string | null | undefined, now = Date.now()): number | undefined {
  const ms = get('retry-after-ms');
  if (ms !== null && ms !== undefined && ms.trim() !== '' && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const value = get('retry-after');
  if (value === null || value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
