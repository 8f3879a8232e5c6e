// Emulates OpenAI's automatic prompt caching for the fake server: no breakpoints, the longest prefix an
// earlier request sent is read back, but only for prompts of 1,024 tokens or more and in 128-token
// steps, as OpenAI documents it. Lets tests and benchmarks see `cached_tokens` on the OpenAI path.
import { canonicalJson, sha256Hex } from '../acm/canonical-json.js';
import type { CacheMeasure } from './cache-emulation.js';

const MIN_CACHED_TOKENS = 1024;
const CACHE_STEP_TOKENS = 128;

export class OpenAiPrefixCacheEmulator {
  private readonly seen = new Set<string>();

  measure(body: Record<string, unknown>): CacheMeasure {
    const tools = body['tools'] === undefined ? '' : canonicalJson(body['tools']);
    const messages: unknown[] = Array.isArray(body['messages']) ? body['messages'] : [];
    const totalTokens = tokensOf(tools.length + (body['messages'] === undefined ? 0 : canonicalJson(body['messages']).length));
    // Prefixes end at message boundaries: tools first (they lead the prompt), then each message.
    let running = sha256Hex(`tools:${tools}`);
    let chars = tools.length;
    const prefixes: { hash: string; tokens: number }[] = [];
    for (const m of messages) {
      const c = canonicalJson(m);
      chars += c.length;
      running = sha256Hex(running + c);
      prefixes.push({ hash: running, tokens: Math.min(totalTokens, tokensOf(chars)) });
    }
    let longest = 0;
    for (const p of prefixes) if (this.seen.has(p.hash)) longest = Math.max(longest, p.tokens);
    for (const p of prefixes) this.seen.add(p.hash);
    const cacheReadTokens =
      totalTokens < MIN_CACHED_TOKENS || longest < MIN_CACHED_TOKENS ? 0 : MIN_CACHED_TOKENS + Math.floor((longest - MIN_CACHED_TOKENS) / CACHE_STEP_TOKENS) * CACHE_STEP_TOKENS;
    return { totalTokens, cacheReadTokens, cacheWriteTokens: 0, inputTokens: totalTokens - cacheReadTokens, breakpoints: 0 };
  }
}

/** chars/4, as pricing's estimate does. */
const tokensOf = (chars: number): number => Math.ceil(chars / 4);
