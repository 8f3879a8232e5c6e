import { describe, expect, it } from 'vitest';
import { canonicalJson, contentAddress, frozenJson, sha256Hex } from '../../../src/core/acm/canonical-json.js';

describe('canonicalJson', () => {
  it('sorts keys and drops whitespace', () => {
    expect(canonicalJson({ b: 1, a: [true, null, 'x'] })).toBe('{"a":[true,null,"x"],"b":1}');
  });

  it('gives the same address for the same value in any key order', () => {
    expect(contentAddress({ x: 1, y: { b: 2, a: 1 } })).toBe(contentAddress({ y: { a: 1, b: 2 }, x: 1 }));
  });

  it('sorts keys by UTF-16 code units, so non-BMP keys sort by their surrogates (RFC 8785)', () => {
    // U+1F600 is \ud83d\ude00, which sorts before U+FB01 (\ufb01) in UTF-16 though after it by code point
    expect(canonicalJson({ '\ufb01': 1, '😀': 2, a: 3, B: 4, '': 5 })).toBe('{"":5,"B":4,"a":3,"😀":2,"ﬁ":1}');
    expect(canonicalJson({ 'é': 1, e: 2, z: 3 })).toBe('{"e":2,"z":3,"é":1}');
  });

  it('keeps unicode text as is and escapes only what JSON requires', () => {
    expect(canonicalJson({ s: 'ünï 😀 "q" \\ \n\t\u0001' })).toBe('{"s":"ünï 😀 \\"q\\" \\\\ \\n\\t\\u0001"}');
  });

  it('escapes lone surrogates rather than emitting invalid UTF-8', () => {
    expect(canonicalJson('\ud800')).toBe('"\\ud800"');
  });

  it.each([
    [1.0, '1'],
    [0.1, '0.1'],
    [-0, '0'],
    [1e21, '1e+21'],
    [1e20, '100000000000000000000'],
    [1e-7, '1e-7'],
    [0.000001, '0.000001'],
    [-1.5, '-1.5'],
    [2 ** 53, '9007199254740992'],
    [5e-324, '5e-324'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [0.1 + 0.2, '0.30000000000000004'],
  ])('writes the number %s as %s', (n, text) => {
    expect(canonicalJson(n)).toBe(text);
  });

  it('serialises nested arrays and objects canonically at every level', () => {
    const value = { z: [{ b: [3, { d: 1, c: [] }], a: {} }], a: [[[]], [null]] };
    expect(canonicalJson(value)).toBe('{"a":[[[]],[null]],"z":[{"a":{},"b":[3,{"c":[],"d":1}]}]}');
  });

  it('drops undefined members and writes undefined array slots as null, as JSON does', () => {
    expect(canonicalJson({ a: undefined, b: [undefined, 1] })).toBe('{"b":[null,1]}');
  });

  it('rejects cycles, non-finite numbers, bigints and functions', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(/cyclic/);
    expect(() => canonicalJson({ n: NaN })).toThrow(/non-finite/);
    expect(() => canonicalJson([Infinity])).toThrow(/non-finite/);
    expect(() => canonicalJson({ b: 1n })).toThrow(/bigint/);
    expect(() => canonicalJson({ f: () => 1 })).toThrow(/function/);
  });

  it('allows the same object twice when it is shared but not cyclic', () => {
    const shared = { k: 1 };
    expect(canonicalJson([shared, shared])).toBe('[{"k":1},{"k":1}]');
  });

  it('hashes the canonical form', () => {
    expect(contentAddress({ b: 1, a: 2 })).toBe(`sha256:${sha256Hex('{"a":2,"b":1}')}`);
    expect(contentAddress({})).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});

describe('frozenJson', () => {
  const message = () => ({ role: 'user', content: [{ type: 'tool_result', toolUseId: 't1', content: 'ok', z: 1, a: [1, { b: -0 }] }] });

  it('serialises to the same text as the unfrozen value, every time, inside new containers too', () => {
    const plain = canonicalJson({ messages: [message(), message()] });
    const m = frozenJson(message());
    for (let i = 0; i < 3; i++) expect(canonicalJson({ messages: [m, m] })).toBe(plain);
  });

  it('freezes all the way down, so nothing can change a value behind its cached text', () => {
    const m = frozenJson(message());
    canonicalJson(m);
    expect(() => {
      (m.content[0]!.a[1] as { b: number }).b = 2;
    }).toThrow(TypeError);
    expect(() => (m.content as unknown[]).push({})).toThrow(TypeError);
    expect(canonicalJson(m)).toBe(canonicalJson(message()));
  });

  it('a cycle is still refused', () => {
    const a: Record<string, unknown> = { x: 1 };
    a.self = a;
    expect(() => canonicalJson(frozenJson(a))).toThrow(/cyclic/);
  });

  it('a value that cannot be frozen (a typed array inside) is not cached: a later change still shows', () => {
    const v: Record<string, unknown> = { n: 1, bytes: new Uint8Array([1, 2]) };
    expect(() => frozenJson(v)).toThrow(TypeError);
    delete v.bytes;
    expect(canonicalJson(v)).toBe('{"n":1}');
    v.n = 2;
    expect(canonicalJson(v)).toBe('{"n":2}');
  });
});
