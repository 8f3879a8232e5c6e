'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const objectPath = require('..');

test("gets and sets nested values", () => {
  const o = { a: { b: [1, { c: 'x' }] } };
  assert.equal(objectPath.get(o, 'a.b.1.c'), 'x');
  objectPath.set(o, 'a.d.e', 5);
  assert.equal(o.a.d.e, 5);
});

test("sets through inherited props when asked", () => {
  const proto = { inner: {} };
  const o = Object.create(proto);
  objectPath.withInheritedProps.set(o, 'inner.k', 1);
  assert.equal(proto.inner.k, 1);
});
