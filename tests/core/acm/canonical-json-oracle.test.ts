// canonicalJson against the implementation every ledger so far was hashed with (ad082fb, the one that
// mapped to arrays and joined), as an oracle: the hash chain of every recorded run depends on the two
// writing the same bytes for every value. Seeded random values, weighted to the edges (escapes, lone
// surrogates, keys that sort differently by code point and code unit, -0, the number forms' boundaries,
// undefined members and slots, toJSON, Dates, shared and nested empty containers, frozen values).
import { describe, expect, it } from 'vitest';
import { canonicalJson, frozenJson } from '../../../src/core/acm/canonical-json.js';
import { rng } from '../../helpers/rng.js';

// ---- the oracle: src/core/acm/canonical-json.ts at ad082fb, without the frozen-value cache ----
function oracle(value: unknown): string {
  return oracleWrite(value, new Set());
}

function oracleWrite(value: unknown, seen: Set<object>): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: non-finite number ${value}`);
      return Object.is(value, -0) ? '0' : JSON.stringify(value);
    case 'object':
      break;
    default:
      throw new TypeError(`canonicalJson: cannot serialise a ${typeof value}`);
  }
  const obj = value;
  if (seen.has(obj)) throw new TypeError('canonicalJson: cyclic structure');
  seen.add(obj);
  try {
    if (Array.isArray(obj)) {
      return `[${obj.map((v: unknown) => (v === undefined ? 'null' : oracleWrite(v, seen))).join(',')}]`;
    }
    if (typeof (obj as { toJSON?: unknown }).toJSON === 'function') {
      return oracleWrite((obj as { toJSON: () => unknown }).toJSON(), seen);
    }
    const record = obj as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((k) => record[k] !== undefined)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${keys.map((k) => `${JSON.stringify(k)}:${oracleWrite(record[k], seen)}`).join(',')}}`;
  } finally {
    seen.delete(obj);
  }
}

/** The text, or the error either refused the value with (both refuse the same values). */
function outcome(write: (v: unknown) => string, v: unknown): string {
  try {
    return write(v);
  } catch (e) {
    return `refused: ${(e as Error).message}`;
  }
}

// ---- seeded values ----
const NUMBERS = [0, -0, 1, -1, 0.1, 0.5, -1.5, 1e21, 1e20, 999999999999999900000, 1e-6, 1e-7, 1.5e-7, 5e-324, -5e-324, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, Number.EPSILON, 0.1 + 0.2, 123456789.125, 1 / 3, 4.35, 1e300 * 10, 2 ** -1074];
const CHARS = ['a', 'B', 'z', '0', ' ', '"', '\\', '/', '\n', '\r', '\t', '\b', '\f', '\u0000', '\u0001', '\u001f', '\u007f', '\u0080', '\u00e9', '\u2028', '\u2029', '\ufb01', '\ufeff', '\uffff', '\ud800', '\udbff', '\udc00', '\udfff', '😀', '\ud83d\ude00', '𝄞', 'é', '\u0301', '日'];
const KEYS = ['', 'a', 'A', 'b', 'aa', '_', '1', '10', '2', '-1', '__proto__x', 'constructor', 'toString', 'é', 'e', '\ufb01', '😀', '\ud800', '\udfff', 'hash', 'seq'];

function generator(seed: number) {
  const r = rng(seed);
  const int = (n: number) => Math.floor(r() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const string = (): string => {
    let s = '';
    for (let i = int(r() < 0.2 ? 40 : 6); i > 0; i--) s += pick(CHARS);
    return s;
  };
  const number = (): number => {
    switch (int(4)) {
      case 0:
        return pick(NUMBERS);
      case 1:
        return (r() - 0.5) * 10 ** (int(640) - 320);
      case 2:
        return int(2 ** 31) * (r() < 0.5 ? -1 : 1);
      default:
        return r();
    }
  };
  const value = (depth: number, shared: object[]): unknown => {
    const leaf = depth <= 0 || r() < 0.35;
    if (leaf) {
      switch (int(7)) {
        case 0:
          return null;
        case 1:
          return r() < 0.5;
        case 2:
        case 3:
          return number();
        default:
          return string();
      }
    }
    switch (int(8)) {
      case 0: {
        // Arrays, with undefined slots (written as null by both).
        const a: unknown[] = [];
        for (let i = int(5); i > 0; i--) a.push(r() < 0.1 ? undefined : value(depth - 1, shared));
        return a;
      }
      case 1:
        return r() < 0.5 ? [] : {};
      case 2: {
        const inner = value(depth - 1, shared);
        return { toJSON: () => inner, ignored: 'toJSON speaks for the object' };
      }
      case 3:
        return new Date(Math.floor(r() * 4e12));
      case 4:
        // One object reached twice (not a cycle).
        return shared.length > 0 && r() < 0.5 ? pick(shared) : value(depth - 1, shared);
      default: {
        const o: Record<string, unknown> = {};
        for (let i = int(6); i > 0; i--) o[r() < 0.5 ? pick(KEYS) : string()] = r() < 0.15 ? undefined : value(depth - 1, shared);
        if (r() < 0.3) shared.push(o);
        return o;
      }
    }
  };
  return () => value(5, []);
}

describe('canonicalJson writes what the implementation every ledger was hashed with wrote', () => {
  it('for 4000 seeded values weighted to the edges, plain and frozen', () => {
    const next = generator(0x5eed);
    for (let i = 0; i < 4000; i++) {
      const v = next();
      const expected = outcome(oracle, v);
      expect(outcome(canonicalJson, v), `value #${i}`).toBe(expected);
      // A frozen value (Dates and toJSON closures freeze too) is written from its cache the second time.
      const frozen = frozenJson(v);
      expect(outcome(canonicalJson, frozen), `frozen value #${i}`).toBe(expected);
      expect(outcome(canonicalJson, { again: frozen, list: [frozen] }), `frozen value #${i} inside`).toBe(outcome(oracle, { again: v, list: [v] }));
    }
  });

  it('for the hand-picked edges', () => {
    const edges: unknown[] = [
      -0,
      [-0, { z: -0 }],
      '\ud800',
      '\udc00\ud800',
      { '\ud800': 1, '\udfff': 2, '😀': 3, '\ufb01': 4, '': 5 },
      { a: undefined },
      { a: undefined, b: 1 },
      { b: 1, a: undefined },
      { a: undefined, b: undefined },
      [undefined],
      [undefined, undefined],
      [[[]], [{}], {}, { a: {} }],
      { x: { toJSON: () => ({ b: 1, a: [undefined] }) } },
      new Date(0),
      { when: new Date(1e12) },
      { 10: 'ten', 2: 'two', 1: 'one', a: 'a' },
      Object.assign(Object.create(null) as object, { b: 1, a: 2 }),
      [1e21, 1e-7, 5e-324, 2 ** 53, 0.30000000000000004],
    ];
    for (const v of edges) expect(outcome(canonicalJson, v)).toBe(outcome(oracle, v));
    // Refused alike: a toJSON that gives undefined, non-finite numbers, bigints, functions, cycles.
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = [cyclic];
    for (const v of [{ toJSON: () => undefined }, { x: { toJSON: () => undefined } }, [NaN], { n: -Infinity }, { b: 1n }, [() => 1], cyclic]) {
      expect(outcome(canonicalJson, v)).toMatch(/^refused: canonicalJson: /);
      expect(outcome(canonicalJson, v)).toBe(outcome(oracle, v));
    }
  });

  it('the one difference: an array with holes is written as JSON (null), where the old one wrote no JSON', () => {
    // Array.prototype.map skips holes and join writes them as nothing: the old text was `[1,,3]`, which no
    // ledger line could hold (the writer's line is this text), so no recorded hash was over a hole.
    // eslint-disable-next-line no-sparse-arrays
    const holes = [1, , 3];
    expect(oracle(holes)).toBe('[1,,3]');
    expect(canonicalJson(holes)).toBe('[1,null,3]');
    expect(canonicalJson(holes)).toBe(JSON.stringify(holes));
  });
});
