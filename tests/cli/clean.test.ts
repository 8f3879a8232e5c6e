import { describe, expect, it } from 'vitest';
import { keepReason, parseDuration } from '../../src/cli/clean-action.js';
import { isAciaError } from '../../src/core/errors.js';

describe('acia clean rules', () => {
  it('parses durations', () => {
    expect(parseDuration('30m')).toBe(1_800_000);
    expect(parseDuration('2w')).toBe(14 * 86_400_000);
    for (const bad of ['', '7', 'd', '1.5h', '-1d', '7 days']) {
      let code: string | null = null;
      try {
        parseDuration(bad);
      } catch (e) {
        code = isAciaError(e) ? e.code : 'other';
      }
      expect(code, bad).toBe('USAGE');
    }
  });

  it('keeps every run that can still go on unless --all, and never one running now', () => {
    const now = Date.parse('2026-11-23T12:00:00Z');
    const run = { runId: 'r', startedAt: '2026-11-01T00:00:00Z', lastAt: '2026-11-01T00:00:00Z', finished: 'it succeeded', awaitingHuman: false, reason: 'succeeded', startedWork: true, live: false };
    const resumable = { ...run, finished: null };
    expect(keepReason(run, now, null)).toBeNull();
    expect(keepReason({ ...resumable, awaitingHuman: true, reason: 'awaiting_human' }, now, null)).toMatch(/waiting for a human/);
    expect(keepReason({ ...resumable, awaitingHuman: true, reason: 'budget_exhausted' }, now, null)).toMatch(/waiting for a human/);
    expect(keepReason({ ...resumable, reason: null }, now, null)).toMatch(/may still be running/);
    expect(keepReason({ ...resumable, reason: 'error' }, now, null)).toMatch(/resumable \(it stopped: error\): `acia resume r`/);
    for (const r of [{ ...resumable, awaitingHuman: true }, { ...resumable, reason: null }, { ...resumable, reason: 'error' }]) expect(keepReason(r, now, null, true)).toBeNull();
    expect(keepReason({ ...resumable, reason: null, live: true }, now, null, true)).toBe('running now');
    expect(keepReason(run, now, parseDuration('30d'))).toMatch(/newer than/);
    expect(keepReason(run, now, parseDuration('7d'))).toBeNull();
  });
});
