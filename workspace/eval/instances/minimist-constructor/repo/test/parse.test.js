'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const parse = require('..');

test("parses flags and values", () => {
  const argv = parse(['-x', '3', '--beep=boop', 'foo', '--no-color']);
  assert.equal(argv.x, 3);
  assert.equal(argv.beep, 'boop');
  assert.equal(argv.color, false);
  assert.deepEqual(argv._, ['foo']);
});

test("parses dotted keys", () => {
  const argv = parse(['--a.b', '1', '--a.c=x']);
  assert.deepEqual(argv.a, { b: 1, c: 'x' });
});

test("ignores __proto__ keys", () => {
  parse(['--__proto__.p1', 'x']);
  assert.equal(({}).p1, undefined);
});
