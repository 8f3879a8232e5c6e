'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const os = require('node:os');
const fs = require('node:fs');
const y18n = require('..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'y18n-'));

test("a __proto__ locale does not pollute", () => {
  const y = y18n({ directory: dir, updateFiles: false });
  y.setLocale('__proto__');
  y.updateLocale({ polluted: 'yes' });
  const polluted = ({}).polluted;
  delete Object.prototype.polluted;
  assert.equal(polluted, undefined);
});
