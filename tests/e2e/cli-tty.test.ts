// The escalation prompt on a real terminal: the CLI runs under util-linux `script`, which gives it a pty,
// and the test types the answer once the prompt shows. Also checks NO_COLOR and FORCE_COLOR.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acia, ledgerOf, onlyRunId, tempDir } from './helpers.js';
import { hasScript, onTty } from './tty-helpers.js';

// CI installs bsdutils (.ci/run), so there the TTY test must run, not skip.
if (!hasScript && process.env.ACIA_TEST_REQUIRE_SANDBOX === '1') throw new Error('util-linux `script` is missing; .ci/run installs bsdutils');
// eslint-disable-next-line no-control-regex
const COLOUR = /\x1b\[[0-9;]*m/;

/** Runs the CLI on a pty; types `answer` (and Enter) when the prompt appears. */
async function onTtyOnce(args: string[], answer: string | null, env: Record<string, string> = {}): Promise<{ code: number; transcript: string; prompted: boolean }> {
  const r = await onTty(args, answer === null ? [] : [answer], env);
  return { code: r.code, transcript: r.transcript, prompted: r.prompts > 0 };
}

describe.skipIf(!hasScript)('on a terminal (util-linux script)', () => {
  it('asks the human after the fix loop; "abort" is recorded and exits 130', async () => {
    const repo = join(tempDir('tty-abort'), 'repo');
    const r = await onTtyOnce(['demo', '--scenario', 'escalate', '--dir', repo], 'abort', { NO_COLOR: '1' });
    expect(r.prompted, r.transcript).toBe(true);
    expect(r.transcript).toContain('The team needs you');
    expect(r.code, r.transcript).toBe(130);
    const runId = onlyRunId(repo);
    const entries = ledgerOf(repo, runId);
    const answer = entries.find((e) => e.type === 'HUMAN_RESPONSE');
    expect(answer).toMatchObject({ actor: 'human', data: { action: 'abort' } });
    expect(entries.at(-1)!.data).toMatchObject({ reason: 'aborted' });
    // NO_COLOR: the live view still moves the cursor, but sets no colours
    expect(r.transcript).not.toMatch(COLOUR);
    expect(acia(['verify', runId, '--repo', repo]).code).toBe(0);
  });

  it('"skip" is recorded and the run goes on to its end, which is not a success (the tests still fail)', async () => {
    const repo = join(tempDir('tty-skip'), 'repo');
    const r = await onTtyOnce(['demo', '--scenario', 'escalate', '--dir', repo], 'skip', { NO_COLOR: '1' });
    expect(r.prompted, r.transcript).toBe(true);
    const entries = ledgerOf(repo, onlyRunId(repo));
    expect(entries.find((e) => e.type === 'HUMAN_RESPONSE')?.data).toMatchObject({ action: 'skip' });
    const seqOf = (type: string) => entries.findIndex((e) => e.type === type);
    expect(seqOf('HUMAN_RESPONSE')).toBeLessThan(seqOf('RUN_COMPLETED'));
    expect(entries.at(-1)!.type).toBe('RUN_COMPLETED');
    expect(entries.at(-1)!.data).toMatchObject({ reason: 'verification_failed' });
    expect(r.code).toBe(1);
  });

  it('colours the terminal view by default', async () => {
    const r = await onTtyOnce(['demo', '--scenario', 'happy', '--dir', join(tempDir('tty-colour'), 'repo')], null, { TERM: 'xterm', NO_COLOR: '' });
    expect(r.code, r.transcript).toBe(0);
    expect(r.transcript).toMatch(COLOUR);
  });
});

describe('FORCE_COLOR', () => {
  it('colours output without a terminal, even with NO_COLOR set', () => {
    const r = acia(['demo', '--quiet', '--dir', join(tempDir('force'), 'repo')], { env: { FORCE_COLOR: '1', NO_COLOR: '1' } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(COLOUR);
  });
});
