'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const parse = require('..');

test("does not pollute through constructor", () => {
  parse(['--_.constructor.constructor.prototype.foo', 'bar']);
  const polluted = (function () {}).foo;
  delete Function.prototype.foo;
  assert.equal(polluted, undefined);
});
