'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const kindOf = require('..');

test("is not fooled by a constructor property", () => {
  assert.equal(kindOf({ constructor: { name: 'Symbol' } }), 'object');
  assert.equal(kindOf({ constructor: { name: 'Promise' } }), 'object');
});
