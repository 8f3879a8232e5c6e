'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const deepExtend = require('..');

test("does not pollute Object.prototype", () => {
  deepExtend({}, JSON.parse('{"__proto__": {"polluted": 1}}'));
  const polluted = ({}).polluted;
  delete Object.prototype.polluted;
  assert.equal(polluted, undefined);
});
