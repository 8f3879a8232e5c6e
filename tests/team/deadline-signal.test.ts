// --max-minutes bounds every tool call through the signal a tool context carries. That signal must fire
// even after a garbage collection: node 20's AbortSignal.any holds its sources weakly, and a deadline
// signal nothing else referenced was collected under load, so `sleep 600` outlived a 3-second budget.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { toolContext } from '../../src/team/task-common.js';
import type { RunContext } from '../../src/team/run-context.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function context(maxMinutes: number): RunContext {
  const ctx = {
    sessionStartMs: Date.now(),
    state: { budgetWaived: false },
    testCommand: null,
    deps: {
      tools: { fs: {}, runnerFor: () => ({}) },
      config: { commandTimeoutS: 60, budget: { maxMinutes } },
      // Ctrl-C's signal: with it, the deadline is combined through AbortSignal.any.
      runtime: { signal: new AbortController().signal, clock: { now: () => new Date() } },
    },
  };
  return ctx as unknown as RunContext;
}

describe('the deadline signal of a tool context', () => {
  it('fires at --max-minutes although nothing but the combined signal references it, across collections', async () => {
    const signal = toolContext(context(0.2 / 60), '/nonexistent').signal!; // 200 ms
    expect(signal.aborted).toBe(false);
    for (let i = 0; i < 5; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, 300));
    gc();
    expect(signal.aborted).toBe(true);
  });
});
