'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const ms = require('..');

test("parses negative durations", () => {
  assert.equal(ms('-1h'), -3600000);
  assert.equal(ms('-100ms'), -100);
});
