import { describe, expect, it } from 'vitest';
import { AciaError } from '../../../src/core/errors.js';
import { ScriptEngine, parseScript } from '../../../src/core/llm/script.js';

function errorOf(fn: () => unknown): AciaError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(AciaError);
    return e as AciaError;
  }
  throw new Error('expected a throw');
}

describe('script format', () => {
  it('rejects an unknown fault with a one-line error naming the JSON path', () => {
    const e = errorOf(() => parseScript({ version: 1, turns: [{ caller: 'pm' }, { caller: 'dev:t1', fault: 'teapot' }] }, 'demo.json'));
    expect(e.code).toBe('CONFIG_INVALID');
    expect(e.message).toMatch(/^demo\.json: \$\.turns\[1\]\.fault: /);
    expect(e.message).not.toContain('\n');
  });

  it('rejects unknown keys and a wrong version', () => {
    expect(errorOf(() => parseScript({ version: 2, turns: [] })).message).toContain('$.version');
    expect(errorOf(() => parseScript({ version: 1, turns: [{ caller: 'pm', txt: 'typo' }] })).message).toContain('$.turns[0]');
  });
});

describe('ScriptEngine', () => {
  const engine = (): ScriptEngine =>
    new ScriptEngine(
      parseScript({
        version: 1,
        turns: [
          { caller: 'pm', text: 'plan' },
          { caller: 'dev:t1', text: 'dev one' },
          { caller: 'dev:*', toolCalls: [{ name: 'read_file', input: { path: 'a' } }] },
          { caller: 'dev:t2', fault: '529', times: 2 },
          { caller: 'dev:t2', text: 'after faults' },
        ],
      }),
    );

  it('gives each caller its own ordered queue, with globs matching by prefix', () => {
    const e = engine();
    expect(e.next('dev:t2').toolCalls[0]?.name).toBe('read_file');
    expect(e.next('pm').text).toBe('plan');
    expect(e.next('dev:t1').text).toBe('dev one');
    expect(e.next('dev:t2').fault).toBe('529');
    expect(e.next('dev:t2').fault).toBe('529');
    expect(e.next('dev:t2').text).toBe('after faults');
    expect(e.unconsumed()).toEqual([]);
  });

  it('assigns deterministic tool ids and defaults the stop reason', () => {
    const turn = engine().next('dev:t9');
    expect(turn.toolCalls[0]?.id).toBe('toolu_dev_t9_1');
    expect(turn.stopReason).toBe('tool_use');
  });

  it('fails loudly naming the caller and how many turns it was served', () => {
    const e = engine();
    e.next('pm');
    const err = errorOf(() => e.next('pm'));
    expect(err.code).toBe('SCRIPT_EXHAUSTED');
    expect(err.message).toBe('scripted model: no turn left for caller "pm" (served 1 turns to it; script has none matching)');
  });
});
