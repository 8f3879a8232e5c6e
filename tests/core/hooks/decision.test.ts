// A hook's answer: exit 0 allows, exit 2 denies with stderr, a JSON answer decides in Claude Code's terms,
// and anything broken is a denial that says what happened.
import { describe, expect, it } from 'vitest';
import { interpretHook, type HookExec } from '../../../src/core/hooks/decision.js';

const exec = (over: Partial<HookExec>): HookExec => ({ exitCode: 0, signal: null, timedOut: false, stdout: '', stderr: '', durationMs: 5, ...over });

describe('interpretHook', () => {
  it('allows on exit 0, plain text on stdout deciding nothing', () => {
    expect(interpretHook('h', exec({ stdout: 'lint clean\n' }), 1000)).toEqual({ allow: true });
  });

  it('denies on exit 2 with stderr as the reason', () => {
    expect(interpretHook('h', exec({ exitCode: 2, stderr: 'src/a.js:3 unused variable x\n' }), 1000)).toEqual({ allow: false, reason: 'src/a.js:3 unused variable x' });
    expect(interpretHook('h', exec({ exitCode: 2 }), 1000)).toMatchObject({ allow: false, reason: 'hook h denied (exit 2) without a message on stderr' });
  });

  it('denies on any other exit code, a signal, a timeout or a start failure, with the output', () => {
    expect(interpretHook('h', exec({ exitCode: 1, stderr: 'TypeError: x is undefined' }), 1000)).toEqual({ allow: false, reason: 'hook h failed with exit code 1:\nTypeError: x is undefined', failure: 'crashed' });
    expect(interpretHook('h', exec({ exitCode: null, signal: 'SIGSEGV' }), 1000)).toMatchObject({ allow: false, failure: 'crashed', reason: 'hook h was killed by SIGSEGV (no output)' });
    expect(interpretHook('h', exec({ exitCode: null, timedOut: true, stdout: 'waiting...' }), 1500)).toMatchObject({ allow: false, failure: 'timed_out', reason: 'hook h timed out after 1.5s and was killed:\nwaiting...' });
    expect(interpretHook('h', exec({ exitCode: 127, startError: 'failed to start sh: ENOENT' }), 1000)).toMatchObject({ allow: false, failure: 'not_started' });
  });

  it("reads Claude Code's JSON answers", () => {
    const pre = { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'rm -rf is blocked' } };
    expect(interpretHook('h', exec({ stdout: JSON.stringify(pre) }), 1000)).toEqual({ allow: false, reason: 'rm -rf is blocked' });
    expect(interpretHook('h', exec({ stdout: JSON.stringify({ decision: 'block', reason: 'lint fails' }) }), 1000)).toEqual({ allow: false, reason: 'lint fails' });
    expect(interpretHook('h', exec({ stdout: JSON.stringify({ continue: false, stopReason: 'stop now' }) }), 1000)).toEqual({ allow: false, stop: true, reason: 'stop now' });
    expect(interpretHook('h', exec({ stdout: JSON.stringify({ hookSpecificOutput: { permissionDecision: 'ask' } }) }), 1000)).toMatchObject({ allow: false });
    expect(interpretHook('h', exec({ stdout: JSON.stringify({ decision: 'approve', hookSpecificOutput: { additionalContext: 'note: tests are slow' } }) }), 1000)).toEqual({ allow: true, context: 'note: tests are slow' });
    expect(interpretHook('h', exec({ stdout: JSON.stringify({ suppressOutput: true }) }), 1000)).toEqual({ allow: true });
  });

  it('denies a garbled or ill-typed JSON answer rather than guessing', () => {
    expect(interpretHook('h', exec({ stdout: '{"decision": "block", ' }), 1000)).toMatchObject({ allow: false, failure: 'bad_output' });
    expect(interpretHook('h', exec({ stdout: '{"decision": "maybe"}' }), 1000)).toMatchObject({ allow: false, failure: 'bad_output', reason: expect.stringMatching(/^hook h printed an answer ACIA cannot read: decision/) as unknown });
  });
});
