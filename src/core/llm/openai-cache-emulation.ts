// Emulates OpenAI's automatic prompt caching for the fake server: no breakpoints, the longest prefix an
// earlier request sent is read back, but only for prompts of 1,024 tokens or more and in 128-token
// steps, as OpenAI documents it. Lets tests and benchmarks see `cached_tokens` on the OpenAI path.
import { canonicalJson, sha256Hex } from '../acm/canonical-json.js';
import type { CacheMeasure } from './cache-emulation.js';

const MIN_CACHED_TOKENS = 1024;
const CACHE_STEP_TOKENS = 128;

export class OpenAiPrefixCacheEmulator {
  private readonly seen = new Set<string>();

  /**
   * `lead` names the fields that open the prompt (chat completions: the tools; the Responses API adds
   * `instructions`, Gemini its `systemInstruction`), `items` the list whose entries end prefixes.
   */
  measure(body: Record<string, unknown>, shape: { lead: readonly string[]; items: string } = { lead: ['tools'], items: 'messages' }): CacheMeasure {
    const tools = shape.lead.map((k) => (body[k] === undefined ? '' : canonicalJson(body[k]))).join('');
    const messages: unknown[] = Array.isArray(body[shape.items]) ? (body[shape.items] as unknown[]) : [];
    const totalTokens = tokensOf(tools.length + (body[shape.items] === undefined ? 0 : canonicalJson(body[shape.items]).length));
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
