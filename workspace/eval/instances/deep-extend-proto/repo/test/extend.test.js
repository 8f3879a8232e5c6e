'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const deepExtend = require('..');

test("merges nested objects", () => {
  const t = { a: 1, b: { c: 2 } };
  deepExtend(t, { b: { d: 3 } }, { e: 4 });
  assert.deepEqual(t, { a: 1, b: { c: 2, d: 3 }, e: 4 });
});

test("clones dates and arrays", () => {
  const d = new Date(0);
  const t = deepExtend({}, { d, l: [1, 2] });
  assert.notEqual(t.d, d);
  assert.equal(t.d.getTime(), 0);
  assert.deepEqual(t.l, [1, 2]);
});
