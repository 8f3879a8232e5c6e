// The one table from an HTTP failure of a model endpoint to what the caller sees: which statuses are
// worth another attempt (and under which code) and which end the call. Both clients use it, so the
// Anthropic SDK path and the OpenAI-compatible path cannot drift apart.
import { AciaError } from '../errors.js';
import { RetryableFailure } from './retry.js';

export interface HttpFailure {
  /** Who answered, for the message: `Anthropic`, or the base URL of an OpenAI-compatible server. */
  who: string;
  status: number;
  /** The server's own error message. */
  message: string;
  retryAfterMs: number | undefined;
  /** The provider's error type (`overloaded_error`, ...), when the body names one. */
  errorType?: string | undefined;
  /** How to fix rejected credentials (which variables to check). */
  authHint: string;
  cause?: unknown;
}

const CONTEXT_LENGTH = /prompt is too long|context (length|window)|too many (input )?tokens|maximum context|exceeds? .*context/i;

/** Providers say "the prompt is too long" in many ways, often as a plain 400. */
export function isContextLengthMessage(message: string): boolean {
  return CONTEXT_LENGTH.test(message);
}

export function classifyHttpFailure(f: HttpFailure): RetryableFailure | AciaError {
  const { who, status, message, retryAfterMs, cause } = f;
  const withCause = cause === undefined ? {} : { cause };
  if (status === 401 || status === 403) {
    return new AciaError('LLM_AUTH', `${who} rejected the credentials (${status}): ${message}`, { hint: f.authHint, ...withCause });
  }
  if (status === 429 || f.errorType === 'rate_limit_error') return new RetryableFailure('LLM_RATE_LIMITED', `${who} rate limit (${status}): ${message}`, retryAfterMs, cause);
  if (status === 529 || f.errorType === 'overloaded_error') return new RetryableFailure('LLM_OVERLOADED', `${who} overloaded (${status}): ${message}`, retryAfterMs, cause);
  if (status >= 500) return new RetryableFailure('LLM_SERVER', `${who} server error (${status}): ${message}`, retryAfterMs, cause);
  if (status === 413 || isContextLengthMessage(message)) {
    return new AciaError('LLM_CONTEXT_LENGTH', `prompt exceeds the model's context (${status}): ${message}`, withCause);
  }
  return new AciaError('LLM_BAD_REQUEST', `${who} rejected the request (${status}): ${message}`, withCause);
}
