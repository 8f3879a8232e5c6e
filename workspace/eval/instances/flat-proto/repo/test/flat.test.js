'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { flatten, unflatten } = require('..');

test("flattens nested objects", () => {
  assert.deepEqual(flatten({ a: { b: { c: 1 } }, d: [1] }), { 'a.b.c': 1, 'd.0': 1 });
});

test("unflattens dotted keys", () => {
  assert.deepEqual(unflatten({ 'a.b': 1, 'a.c': 2 }), { a: { b: 1, c: 2 } });
});
