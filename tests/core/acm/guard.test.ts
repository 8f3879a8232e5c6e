import { describe, expect, it } from 'vitest';
import {
  evaluateGuard,
  guardTaskRefs,
  GuardSyntaxError,
  MAX_GUARD_DEPTH,
  MAX_GUARD_LENGTH,
  parseGuard,
  type GuardNode,
  type GuardScope,
} from '../../../src/core/acm/guard.js';

const scope: GuardScope = {
  tasks: {
    t3: { risk: 'HIGH', score: 7, tags: ['a', 'b'], nested: { 'x-y': true, deep: { n: null } } },
    t4: { ok: false, count: 0 },
    'fix-1': { passed: true },
  },
  context: { facts: { lang: 'ts', files: 12, 'é': 'ünï', emoji: '😀' } },
  policy: { allow: false, limits: { retries: 2 } },
};

const run = (src: string, s: GuardScope = scope): boolean => evaluateGuard(parseGuard(src), s);

function syntaxError(src: string): GuardSyntaxError {
  try {
    parseGuard(src);
  } catch (e) {
    if (e instanceof GuardSyntaxError) return e;
    throw e;
  }
  throw new Error(`expected a syntax error for ${src}`);
}

describe('guard evaluation', () => {
  it.each([
    ["$t3.risk == 'HIGH'", true],
    ["$t3.risk != 'HIGH'", false],
    ['!policy.allow', true],
    ['policy.limits.retries >= 2 && policy.limits.retries < 3', true],
    ['$t3.score > 5 || $t4.ok', true],
    ['$t4.ok || $t4.count == 0', true],
    ['$t3["risk"] == "HIGH"', true],
    ["$t3.tags[1] == 'b'", true],
    ['$t3.tags[2] == null', true],
    ['$t3.nested["x-y"]', true],
    ['$t3.nested.deep.n == null', true],
    ['$fix-1.passed', true],
    ["context.facts.lang == 'ts'", true],
    ["facts.lang == 'ts' && facts.files == 12", true],
    ['facts.files == 12.0', true],
    ['facts.files == -12', false],
    ['facts.files > 1e1', true],
    ["'abc' < 'abd'", true],
    ['(true || false) && !(false)', true],
    ['true == true', true],
    ['null == null', true],
  ])('%s is %s', (src, expected) => {
    expect(run(src)).toBe(expected);
  });

  it('compares strictly: no type coercion between strings, numbers, booleans and null', () => {
    expect(run("facts.files == '12'")).toBe(false);
    expect(run('$t4.count == false')).toBe(false);
    expect(run('$t4.count == null')).toBe(false);
    expect(run("facts.files != '12'")).toBe(true);
  });

  it('orders only two numbers or two strings; mixed comparisons are false both ways', () => {
    expect(run("facts.files < '13'")).toBe(false);
    expect(run("facts.files >= '13'")).toBe(false);
    expect(run('null < 1')).toBe(false);
    expect(run('null >= 1')).toBe(false);
  });

  it('reads a missing path as null, also through non-objects', () => {
    expect(run('$t9.anything == null')).toBe(true);
    expect(run('$t3.risk.length == null')).toBe(true);
    expect(run('$t3.tags.length == null')).toBe(true);
    expect(run('$t3[0] == null')).toBe(true);
  });

  it('counts only the boolean true as true', () => {
    expect(run('$t3.score')).toBe(false);
    expect(run("$t3.risk && true")).toBe(false);
    expect(run('!$t3.missing')).toBe(true);
    expect(run('!$t3.score')).toBe(true);
  });

  it('binds ! looser than comparison', () => {
    expect(run("!$t3.risk == 'HIGH'")).toBe(false);
    expect(run("!$t3.risk == 'LOW'")).toBe(true);
  });

  it('compares arrays and objects structurally', () => {
    const s: GuardScope = { ...scope, tasks: { a: { v: [1, { k: 'x' }] }, b: { v: [1, { k: 'x' }] }, c: { v: [1] } } };
    expect(run('$a.v == $b.v', s)).toBe(true);
    expect(run('$a.v == $c.v', s)).toBe(false);
  });

  it('handles unicode in strings and field names', () => {
    expect(run('facts["é"] == \'ünï\'')).toBe(true);
    expect(run("facts.emoji == '😀'")).toBe(true);
    expect(run("facts.emoji == '\\ud83d\\ude00'")).toBe(true);
  });
});

describe('guard syntax errors carry the 1-based column', () => {
  it.each([
    ["$t3.risk = 'HIGH'", 10, "did you mean '=='"],
    ["$t3.risk == 'HIGH' &", 20, "'&&'"],
    ['$t3.risk ==', 12, 'expected a value'],
    ['', 1, 'empty guard'],
    ['(true', 6, "expected ')'"],
    ['true)', 5, "unexpected ')'"],
    ['foo == 1', 1, "unknown name 'foo'"],
    ["'abc", 1, 'unterminated string'],
    ["'a\\qb'", 3, "unknown escape '\\q'"],
    ['$ == 1', 1, 'task id'],
    ['$t1. == 1', 6, 'field name'],
    ['$t1[-1]', 5, 'non-negative integer'],
    ['1 < 2 < 3', 7, 'chained'],
    ['12abc', 3, 'malformed number'],
    ['policy.allow # x', 14, "unexpected character '#'"],
  ])('%s fails at column %i', (src, column, fragment) => {
    const e = syntaxError(src);
    expect(e.column).toBe(column);
    expect(e.message).toContain(fragment);
    expect(e.message).toContain(`column ${column}`);
  });

  it('counts columns in code points, so a surrogate pair is one column', () => {
    expect(syntaxError("'😀' == §").column).toBe(8);
    expect(syntaxError("'😀' == 'é' ^").column).toBe(12);
  });
});

describe('hostile guards', () => {
  it.each(['__proto__', 'constructor', 'prototype'])('refuses to parse a %s field, dotted or quoted', (name) => {
    expect(syntaxError(`$t3.${name} == null`).message).toContain(`'${name}' is not a readable field`);
    expect(syntaxError(`facts["${name}"] == null`).column).toBe(7);
    expect(syntaxError(`policy['${name}'] == null`).column).toBe(8);
  });

  it('reads prototype members as null even from a hand-built AST', () => {
    const proto = JSON.parse('{"__proto__": {"allow": true}}') as Record<string, unknown>;
    const s: GuardScope = { tasks: { t: { x: 1 } }, context: { facts: {} }, policy: proto };
    const path = (segments: string[], root: 'policy' | 'task' = 'policy'): GuardNode =>
      root === 'task' ? { kind: 'path', root, taskId: 't', segments } : { kind: 'path', root, segments };
    const isNull = (p: GuardNode): boolean => evaluateGuard({ kind: 'compare', op: '==', left: p, right: { kind: 'literal', value: null } }, s);
    expect(isNull(path(['__proto__']))).toBe(true);
    expect(isNull(path(['__proto__', 'allow']))).toBe(true);
    expect(isNull(path(['constructor'], 'task'))).toBe(true);
    expect(isNull(path(['constructor', 'prototype'], 'task'))).toBe(true);
    expect(isNull(path(['toString'], 'task'))).toBe(true);
    expect(isNull(path(['hasOwnProperty'], 'task'))).toBe(true);
  });

  it('does not reach inherited members through ordinary names', () => {
    expect(run('$t3.toString == null')).toBe(true);
    expect(run('$t3.valueOf == null')).toBe(true);
    expect(run('$t3.hasOwnProperty == null')).toBe(true);
    expect(run('$toString == null')).toBe(true);
    expect(run('$t3.tags.map == null')).toBe(true);
  });

  it('does not run getters in the scope', () => {
    let called = false;
    const facts = Object.defineProperty({}, 'x', {
      enumerable: true,
      get: () => {
        called = true;
        return true;
      },
    }) as Record<string, unknown>;
    expect(evaluateGuard(parseGuard('facts.x'), { tasks: {}, context: { facts }, policy: {} })).toBe(false);
    expect(called).toBe(false);
  });

  it('rejects input longer than the limit', () => {
    const long = `${'true && '.repeat(MAX_GUARD_LENGTH / 8)}true`;
    expect(syntaxError(long).message).toContain(`longer than ${MAX_GUARD_LENGTH}`);
    expect(() => parseGuard(`'${'x'.repeat(MAX_GUARD_LENGTH - 2)}'`)).not.toThrow();
  });

  it('rejects nesting deeper than the limit instead of overflowing the stack', () => {
    const deepParens = `${'('.repeat(MAX_GUARD_DEPTH + 1)}true${')'.repeat(MAX_GUARD_DEPTH + 1)}`;
    expect(syntaxError(deepParens).message).toContain('nesting deeper');
    expect(syntaxError(deepParens).column).toBe(MAX_GUARD_DEPTH + 1);
    expect(syntaxError(`${'!'.repeat(1500)}true`).message).toContain('nesting deeper');
    expect(run(`${'('.repeat(MAX_GUARD_DEPTH)}true${')'.repeat(MAX_GUARD_DEPTH)}`)).toBe(true);
  });

  it('handles long flat chains without recursion trouble', () => {
    expect(run(`${'false || '.repeat(150)}true`)).toBe(true);
  });

  it('rejects unicode outside strings with the right column', () => {
    expect(syntaxError('facts.é == 1').column).toBe(7);
  });
});

describe('guardTaskRefs', () => {
  it('lists referenced tasks once, sorted', () => {
    expect(guardTaskRefs(parseGuard("$t3.risk == 'HIGH' && ($t1.ok || $t3.x) && !policy.allow && facts.y"))).toEqual(['t1', 't3']);
    expect(guardTaskRefs(parseGuard('!policy.allow'))).toEqual([]);
  });
});
