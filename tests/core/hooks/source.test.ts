// A replay's hook decisions: served by occurrence, one occurrence's chain together, and an occurrence whose
// name comes again (a model reusing a call id in a later session) gets its own recorded decisions.
import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../../src/core/ledger/entry.js';
import { RecordedHooks } from '../../../src/core/hooks/source.js';
import type { HookOccurrence } from '../../../src/core/hooks/occurrence.js';

const decision = (at: string, name: string, allow: boolean) =>
  ({
    type: 'POLICY_DECISION',
    data: {
      hook: 'tool.pre',
      taskId: 't1',
      request: { at },
      response: allow ? { allow } : { allow, reason: `${name} says no` },
      by: { name, on: 'tool.pre', command: 'x', sandbox: true, source: null },
      inputDigest: 'sha256:0',
      output: { exitCode: allow ? 0 : 2, signal: null, timedOut: false, stdout: '', stderr: '' },
      durationMs: 1,
    },
  }) as unknown as LedgerEntry;

const o = { event: 'tool.pre' } as HookOccurrence;

describe('RecordedHooks', () => {
  it("serves each occurrence its own chain, in order, and runs nothing", async () => {
    const recorded = new RecordedHooks([
      decision('tool.pre:t1:1:toolu_1', 'audit', true),
      decision('tool.pre:t1:1:toolu_1', 'guard', false),
      decision('tool.pre:t1:1:toolu_2', 'audit', true),
      // The same name in a later session: a second occurrence, not a longer chain.
      decision('tool.pre:t1:1:toolu_1', 'audit', true),
    ]);
    expect(recorded.has('tool.pre')).toBe(true);
    expect(recorded.has('tool.post')).toBe(false);
    const first = await recorded.decide(o, 'tool.pre:t1:1:toolu_1');
    expect(first.map((d) => [d.by.name, d.response.allow])).toEqual([
      ['audit', true],
      ['guard', false],
    ]);
    expect((await recorded.decide(o, 'tool.pre:t1:1:toolu_2')).map((d) => d.by.name)).toEqual(['audit']);
    expect((await recorded.decide(o, 'tool.pre:t1:1:toolu_1')).map((d) => [d.by.name, d.response.allow])).toEqual([['audit', true]]);
    expect(await recorded.decide(o, 'tool.pre:t1:1:toolu_1')).toEqual([]);
  });
});
