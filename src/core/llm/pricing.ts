// Model prices and token estimates: cost per call from usage, and a pre-call estimate for budget checks.
import { canonicalJson } from '../acm/canonical-json.js';
import type { LlmRequest, Usage } from './types.js';

export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
  /** 5-minute cache writes (what the adapters request). */
  cacheWritePerMTok: number;
  cacheReadPerMTok: number;
}

const price = (input: number, output: number, cacheWrite: number, cacheRead: number): ModelPrice => ({
  inputPerMTok: input,
  outputPerMTok: output,
  cacheWritePerMTok: cacheWrite,
  cacheReadPerMTok: cacheRead,
});

/**
 * Anthropic list prices in USD per million tokens, from platform.claude.com model pages as read on
 * 2026-09 (standard tier, 5-minute cache writes). Models of the SDK's Model union whose list price
 * could not be confirmed (claude-haiku-5-5 is tiered "from $0.10", claude-fable-5-2 and
 * claude-mythos-5-2 unconfirmed) are deliberately absent: they cost `null` with a warning, and the
 * config's `prices` can supply them.
 */
export const PRICES: Readonly<Record<string, ModelPrice>> = {
  'claude-opus-5-5': price(4, 20, 5, 0.2),
  'claude-sonnet-5-5': price(2, 10, 2.5, 0.2),
  'claude-sonnet-5': price(2, 10, 2.5, 0.2),
  'claude-opus-5': price(5, 25, 6.25, 0.5),
  'claude-fable-5-1': price(10, 50, 12.5, 1),
  'claude-mythos-5-1': price(10, 50, 12.5, 1),
  'claude-fable-5': price(10, 50, 12.5, 1),
  'claude-mythos-5': price(10, 50, 12.5, 1),
  'claude-opus-4-8': price(5, 25, 6.25, 0.5),
  'claude-opus-4-7': price(5, 25, 6.25, 0.5),
  'claude-opus-4-6': price(5, 25, 6.25, 0.5),
  'claude-opus-4-5': price(5, 25, 6.25, 0.5),
  'claude-opus-4-5-20251101': price(5, 25, 6.25, 0.5),
  'claude-sonnet-4-6': price(3, 15, 3.75, 0.3),
  'claude-sonnet-4-5': price(3, 15, 3.75, 0.3),
  'claude-sonnet-4-5-20250929': price(3, 15, 3.75, 0.3),
  'claude-haiku-4-5': price(1, 5, 1.25, 0.1),
  'claude-haiku-4-5-20251001': price(1, 5, 1.25, 0.1),
  // Models of external Dev agents on other APIs (Codex, Gemini CLI), metered by ACIA's proxy. List prices
  // for prompts under the long-context tier (272K tokens for GPT-5.5, 200K for Gemini 2.5 Pro), as the
  // providers' pricing pages were summarised in 2026 (openai.com/api/pricing, ai.google.dev/pricing):
  // neither charges for writing its cache, so a cache write is priced as input.
  'gpt-5.5': price(5, 30, 5, 0.5),
  'gpt-5.4': price(2.5, 15, 2.5, 0.25),
  'gpt-5.4-mini': price(0.75, 4.5, 0.75, 0.075),
  'gemini-2.5-pro': price(1.25, 10, 1.25, 0.125),
  'gemini-2.5-flash': price(0.3, 2.5, 0.3, 0.03),
  'gemini-2.5-flash-lite': price(0.1, 0.4, 0.1, 0.01),
  // The scripted model costs nothing by construction; pricing it avoids a warning on every demo call.
  scripted: price(0, 0, 0, 0),
};

export type Warn = (message: string) => void;

const warnedModels = new Set<string>();
const defaultWarn: Warn = (message) => {
  process.emitWarning(message, 'AciaPricing');
};

export interface CostOptions {
  /** From config `prices`: extends or overrides the table, keyed by model id. */
  overrides?: Readonly<Record<string, ModelPrice>>;
  warn?: Warn;
}

export function priceFor(model: string, overrides?: Readonly<Record<string, ModelPrice>>): ModelPrice | undefined {
  const id = stripProvider(model);
  return overrides?.[model] ?? overrides?.[id] ?? PRICES[id];
}

/** USD for one call; `null` (and one warning per model) when the model has no price — never a silent 0. */
export function costUsd(model: string, usage: Usage, options: CostOptions = {}): number | null {
  const p = priceFor(model, options.overrides);
  if (p === undefined) {
    warnUnknown(model, options.warn);
    return null;
  }
  return (
    (usage.inputTokens * p.inputPerMTok +
      usage.outputTokens * p.outputPerMTok +
      usage.cacheWriteTokens * p.cacheWritePerMTok +
      usage.cacheReadTokens * p.cacheReadPerMTok) /
    1_000_000
  );
}

function warnUnknown(model: string, warn: Warn | undefined): void {
  const message = `no price for model "${model}": its cost is reported as unknown; add it to config "prices"`;
  if (warn !== undefined) {
    warn(message);
    return;
  }
  if (warnedModels.has(model)) return;
  warnedModels.add(model);
  defaultWarn(message);
}

function stripProvider(model: string): string {
  const m = /^(anthropic|openai|scripted):(.*)$/.exec(model);
  if (m?.[1] === 'scripted') return 'scripted';
  return m?.[2] ?? model;
}

/** About four characters per token: a deliberate over-the-thumb estimate, not a tokenizer. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Input tokens a request will cost, estimated from system, tools JSON and messages. */
export function estimateRequestTokens(req: Pick<LlmRequest, 'system' | 'tools' | 'messages'>): number {
  // Canonical JSON has JSON.stringify's length, and reuses the text of messages already measured (frozenJson).
  return estimateTokens(req.system) + estimateTokens(canonicalJson(req.tools)) + estimateTokens(canonicalJson(req.messages));
}

/** Upper bound on one call's cost before it is made (all input uncached, `maxTokens` of output). */
export function estimateCallCost(
  model: string,
  req: Pick<LlmRequest, 'system' | 'tools' | 'messages'>,
  maxTokens: number,
  options: CostOptions = {},
): number | null {
  return costUsd(
    model,
    { inputTokens: estimateRequestTokens(req), outputTokens: maxTokens, cacheReadTokens: 0, cacheWriteTokens: 0 },
    options,
  );
}
