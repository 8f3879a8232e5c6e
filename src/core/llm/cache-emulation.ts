// Emulates Anthropic prompt caching for the fake server: cache_control breakpoints over the canonical
// request prefix (tools, system, messages), so benchmarks can measure how much of each prompt was reused.
import { canonicalJson, sha256Hex } from '../acm/canonical-json.js';

export interface CacheMeasure {
  /** All input, estimated at chars/4 over the canonical segments. */
  totalTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Input billed at the plain rate: total minus read and written. */
  inputTokens: number;
  breakpoints: number;
}

interface Segment {
  canonical: string;
  breakpoint: boolean;
}

/** How many block boundaries before a breakpoint the API checks for an earlier cache entry. */
const LOOKBACK_BLOCKS = 20;

/** One cache per server: a prefix written by one request is read by the next that shares it. */
export class PromptCacheEmulator {
  private readonly seen = new Set<string>();

  measure(body: Record<string, unknown>): CacheMeasure {
    const segments = segmentsOf(body);
    const prefixTokens: number[] = [];
    const prefixHashes: string[] = [];
    let chars = 0;
    let running = '';
    for (const s of segments) {
      chars += s.canonical.length;
      running = sha256Hex(running + s.canonical);
      prefixTokens.push(tokensOf(chars));
      prefixHashes.push(running);
    }
    const totalTokens = tokensOf(chars);
    const breakpoints = segments.flatMap((s, i) => (s.breakpoint ? [i] : []));
    // Like the real cache: from each breakpoint the lookup walks back over earlier block boundaries
    // (about 20) for a prefix written before, the longest hit is read, the rest up to the last
    // breakpoint is written.
    let readTokens = 0;
    for (const i of breakpoints) {
      for (let j = i; j >= Math.max(0, i - LOOKBACK_BLOCKS); j--) {
        if (this.seen.has(prefixHashes[j] ?? '')) {
          readTokens = Math.max(readTokens, prefixTokens[j] ?? 0);
          break;
        }
      }
    }
    const last = breakpoints.at(-1);
    const lastTokens = last === undefined ? 0 : (prefixTokens[last] ?? 0);
    const writeTokens = Math.max(0, lastTokens - readTokens);
    for (const i of breakpoints) this.seen.add(prefixHashes[i] ?? '');
    return {
      totalTokens,
      cacheReadTokens: readTokens,
      cacheWriteTokens: writeTokens,
      inputTokens: Math.max(0, totalTokens - readTokens - writeTokens),
      breakpoints: breakpoints.length,
    };
  }
}

function segmentsOf(body: Record<string, unknown>): Segment[] {
  const out: Segment[] = [];
  const push = (value: unknown, context: Record<string, unknown> = {}): void => {
    const breakpoint = isRecord(value) && value['cache_control'] !== undefined && value['cache_control'] !== null;
    const stripped = isRecord(value) ? { ...value, cache_control: undefined } : value;
    out.push({ canonical: canonicalJson({ ...context, v: stripped }), breakpoint });
  };
  if (Array.isArray(body['tools'])) for (const t of body['tools'] as unknown[]) push(t, { k: 'tool' });
  const system = body['system'];
  if (typeof system === 'string') push(system, { k: 'system' });
  else if (Array.isArray(system)) for (const b of system as unknown[]) push(b, { k: 'system' });
  if (Array.isArray(body['messages'])) {
    for (const m of body['messages'] as unknown[]) {
      if (!isRecord(m)) continue;
      const role = m['role'];
      const content = m['content'];
      if (Array.isArray(content)) for (const b of content as unknown[]) push(b, { k: 'message', role });
      else push(content, { k: 'message', role });
    }
  }
  return out;
}

/** chars/4, as pricing's estimate does. */
const tokensOf = (chars: number): number => Math.ceil(chars / 4);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
