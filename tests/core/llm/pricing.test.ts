import { describe, expect, it } from 'vitest';
import { costUsd, estimateCallCost, estimateRequestTokens } from '../../../src/core/llm/pricing.js';

const usage = { inputTokens: 1_000_000, outputTokens: 100_000, cacheReadTokens: 2_000_000, cacheWriteTokens: 400_000 };

describe('pricing', () => {
  it('prices a known model from input, output, cache read and cache write tokens', () => {
    // 1M*$2 + 0.1M*$10 + 2M*$0.20 + 0.4M*$2.50
    expect(costUsd('claude-sonnet-5-5', usage)).toBeCloseTo(2 + 1 + 0.4 + 1, 10);
    expect(costUsd('anthropic:claude-sonnet-5-5', usage)).toBeCloseTo(4.4, 10);
  });

  it('returns null for an unknown model and warns, never a silent 0', () => {
    const warnings: string[] = [];
    expect(costUsd('mystery-7b', usage, { warn: (m) => warnings.push(m) })).toBeNull();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('mystery-7b');
  });

  it('lets config overrides price a model the table lacks', () => {
    const overrides = { 'openai:qwen3': { inputPerMTok: 1, outputPerMTok: 1, cacheWritePerMTok: 0, cacheReadPerMTok: 0 } };
    expect(costUsd('openai:qwen3', usage, { overrides })).toBeCloseTo(1.1, 10);
  });

  it('estimates request tokens at chars/4 and a pre-call cost bound', () => {
    const req = { system: 'x'.repeat(400), tools: [], messages: [{ role: 'user' as const, content: 'y'.repeat(396) }] };
    const tokens = estimateRequestTokens(req);
    expect(tokens).toBe(100 + 1 + Math.ceil(JSON.stringify(req.messages).length / 4));
    expect(estimateCallCost('claude-opus-5-5', req, 1000)).toBeCloseTo((tokens * 4 + 1000 * 20) / 1e6, 12);
  });
});
