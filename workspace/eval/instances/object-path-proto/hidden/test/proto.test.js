'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const objectPath = require('..');

test("refuses magic properties with inherited props", () => {
  assert.throws(() => objectPath.withInheritedProps.set({}, '__proto__.polluted', 'yes'), /magic properties/);
  assert.throws(() => objectPath.withInheritedProps.set({}, 'constructor.prototype.polluted', 'yes'), /magic properties/);
  const polluted = ({}).polluted;
  delete Object.prototype.polluted;
  assert.equal(polluted, undefined);
});
