import { describe, expect, it } from 'vitest';
import { PromptCacheEmulator } from '../../../src/core/llm/cache-emulation.js';

const EPH = { type: 'ephemeral' };
const text = (t: string, bp = false) => ({ type: 'text', text: t, ...(bp ? { cache_control: EPH } : {}) });
const body = (msgs: { role: string; content: unknown[] }[]) => ({ system: [text('s'.repeat(400), true)], messages: msgs });

describe('PromptCacheEmulator', () => {
  it('reads a prefix written at an earlier breakpoint that is no longer marked, as the API looks back', () => {
    const cache = new PromptCacheEmulator();
    const first = cache.measure(body([{ role: 'user', content: [text('task '.repeat(100), true)] }]));
    const second = cache.measure(
      body([
        { role: 'user', content: [text('task '.repeat(100))] },
        { role: 'assistant', content: [text('reply '.repeat(50))] },
        { role: 'user', content: [text('more '.repeat(50), true)] },
      ]),
    );
    expect(first.cacheReadTokens).toBe(0);
    expect(second.cacheReadTokens).toBe(first.cacheWriteTokens);
    expect(second.cacheWriteTokens).toBe(second.totalTokens - second.cacheReadTokens);
    expect(second.inputTokens).toBe(0);
  });

  it('reads nothing when the prefix changed before the breakpoint', () => {
    const cache = new PromptCacheEmulator();
    cache.measure(body([{ role: 'user', content: [text('task one', true)] }]));
    const other = cache.measure({ system: [text('t'.repeat(400), true)], messages: [{ role: 'user', content: [text('task one', true)] }] });
    expect(other.cacheReadTokens).toBe(0);
  });
});
