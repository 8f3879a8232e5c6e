'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const ms = require('..');

test("parses whole units", () => {
  assert.equal(ms('2h'), 7200000);
  assert.equal(ms('1d'), 86400000);
  assert.equal(ms('100'), 100);
});

test("parses decimal units", () => {
  assert.equal(ms('1.5h'), 5400000);
  assert.equal(ms('.5s'), 500);
});

test("formats short and long", () => {
  assert.equal(ms(60000), '1m');
  assert.equal(ms(60000, { long: true }), '1 minute');
});
