// Parses a model's streamed tool-input JSON; broken JSON is retryable (a glitch), then LLM_BAD_RESPONSE.
import { errorMessage } from '../errors.js';
import { RetryableFailure } from './retry.js';

export function parseToolInput(name: string, json: string): Record<string, unknown> {
  if (json.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (e) {
    throw new RetryableFailure('LLM_BAD_RESPONSE', `tool_use "${name}" input is not valid JSON (${errorMessage(e)})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new RetryableFailure('LLM_BAD_RESPONSE', `tool_use "${name}" input is not a JSON object`);
  }
  return value as Record<string, unknown>;
}
