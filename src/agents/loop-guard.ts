// Detects an agent repeating the same tool call with nothing changed in between.
import { canonicalJson } from '../core/acm/canonical-json.js';

export type LoopVerdict = 'ok' | 'nudge' | 'stop';

export const LOOP_NUDGE_AT = 3;
export const LOOP_STOP_AT = 5;

/**
 * Counts identical calls (name + canonical input). A successful mutating call with a new key is
 * progress and clears the counts; repeating the very same mutation is not.
 */
export class LoopGuard {
  private readonly counts = new Map<string, number>();
  private lastMutation: string | null = null;

  check(name: string, input: unknown): LoopVerdict {
    const key = keyOf(name, input);
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    if (n >= LOOP_STOP_AT) return 'stop';
    if (n >= LOOP_NUDGE_AT) return 'nudge';
    return 'ok';
  }

  recordMutation(name: string, input: unknown): void {
    const key = keyOf(name, input);
    if (key === this.lastMutation) return;
    this.lastMutation = key;
    const own = this.counts.get(key) ?? 0;
    this.counts.clear();
    this.counts.set(key, own);
  }
}

function keyOf(name: string, input: unknown): string {
  let inputText: string;
  try {
    inputText = canonicalJson(input ?? null);
  } catch {
    inputText = String(input);
  }
  return `${name}\u0000${inputText}`;
}
