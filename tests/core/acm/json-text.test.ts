import { describe, expect, it } from 'vitest';
import { parseJsonText } from '../../../src/core/acm/json-text.js';

const where = (text: string) => {
  const r = parseJsonText(text);
  return r.ok ? 'ok' : `${r.line}:${r.column} ${r.message}`;
};

describe('parseJsonText', () => {
  it('parses valid JSON, with or without a byte-order mark', () => {
    expect(parseJsonText('{"a":[1,2]}')).toEqual({ ok: true, value: { a: [1, 2] } });
    expect(parseJsonText('\ufeff[]')).toEqual({ ok: true, value: [] });
  });

  it.each([
    ['{\n  "a": 1,\n  "b": }\n', '3:8'],
    ['{"a": 1,}', '1:9'],
    ['{"a" 1}', '1:6'],
    ['[1, 2', '1:6'],
    ['', '1:1'],
    ['{"a": tru}', '1:10'],
    ['{"a": "x\ny"}', '1:9'],
    ['{"é😀": 01}', '1:9'],
    ['{} {}', '1:4'],
    ["{'a': 1}", '1:2'],
  ])('locates the error in %j at %s', (text, expected) => {
    expect(where(text).split(' ')[0]).toBe(expected);
  });

  it('says what it expected', () => {
    expect(where('{"a": }')).toContain('expected a value');
    expect(where('[1')).toContain('unexpected end');
  });
});
