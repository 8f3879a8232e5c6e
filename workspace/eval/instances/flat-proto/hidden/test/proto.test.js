'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { unflatten } = require('..');

test("unflatten does not pollute", () => {
  unflatten({ '__proto__.polluted': true });
  const polluted = ({}).polluted;
  delete Object.prototype.polluted;
  assert.equal(polluted, undefined);
});
