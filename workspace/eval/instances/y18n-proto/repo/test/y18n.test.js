'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const os = require('node:os');
const fs = require('node:fs');
const y18n = require('..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'y18n-'));

test("translates with a locale update", () => {
  const y = y18n({ directory: dir, updateFiles: false, locale: 'fr' });
  y.updateLocale({ hello: 'bonjour %s' });
  assert.equal(y.__('hello', 'Ada'), 'bonjour Ada');
});

test("falls back to the key", () => {
  const y = y18n({ directory: dir, updateFiles: false, locale: 'de' });
  assert.equal(y.__('missing'), 'missing');
});
