'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const ini = require('../ini.js');

test("parses sections and values", () => {
  const c = ini.parse('a = 1\n[s]\nb = two\nflag = true\n');
  assert.equal(c.a, '1');
  assert.deepEqual(c.s, { b: 'two', flag: true });
});

test("parses arrays and dotted sections", () => {
  const c = ini.parse('x[] = 1\nx[] = 2\n[a.b]\nk = v\n');
  assert.deepEqual(c.x, ['1', '2']);
  assert.equal(c.a.b.k, 'v');
});

test("round-trips through encode", () => {
  const c = { top: 'v', sec: { k: 'w' } };
  assert.deepEqual(ini.parse(ini.encode(c)), c);
});
