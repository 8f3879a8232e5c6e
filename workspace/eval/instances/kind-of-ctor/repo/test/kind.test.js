'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const kindOf = require('..');

test("names primitives", () => {
  assert.equal(kindOf('a'), 'string');
  assert.equal(kindOf(1), 'number');
  assert.equal(kindOf(null), 'null');
  assert.equal(kindOf(undefined), 'undefined');
  assert.equal(kindOf(Symbol('s')), 'symbol');
});

test("names built-in objects", () => {
  assert.equal(kindOf([]), 'array');
  assert.equal(kindOf(new Map()), 'map');
  assert.equal(kindOf(Promise.resolve()), 'promise');
  assert.equal(kindOf(new Date()), 'date');
  assert.equal(kindOf({}), 'object');
});
