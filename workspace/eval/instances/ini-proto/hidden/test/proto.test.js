'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const ini = require('../ini.js');

test("ignores a __proto__ section", () => {
  const c = ini.parse('[__proto__]\npolluted = true\n[ok]\nk = v\n');
  const polluted = ({}).polluted;
  delete Object.prototype.polluted;
  assert.equal(polluted, undefined);
  assert.equal(c.ok.k, 'v');
});

test("ignores __proto__ array keys", () => {
  const c = ini.parse('__proto__[] = x\nk = v\n');
  assert.equal(Object.getPrototypeOf(c), Object.prototype);
  assert.equal(c.k, 'v');
});
