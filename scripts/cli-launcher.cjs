#!/usr/bin/env node
'use strict';
// `acia` (dist/bin/acia.js, copied here by scripts/bundle-cli.mjs): loads the bundled CLI (./main.js and
// ./chunks/) with V8's code cache that the build wrote to ./code-cache/. Compiling the ~1.5 MB of the
// bundle that `acia run` loads was about a quarter of its start-up; reading the cache is much cheaper.
//
// A cache file is named by the sha256 of the exact source it was made from, so it can only ever meet
// that source (V8's own check is the source's length). V8 refuses a cache made by another V8 version or
// with other flags, and then compiles the source as node would. Files outside this directory, and
// every file when node maps sources (--enable-source-maps) or a debugger may attach, load as usual.
const Module = require('node:module');
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { dirname, join } = require('node:path');
const { compileAndRun } = require('./cached-compile.cjs');

const own = new Set([__dirname, join(__dirname, 'chunks')]);
const cacheDir = join(__dirname, 'code-cache');
const plainCompile = Module.prototype._compile;

function cachedCompile(content, filename, ...rest) {
  if (!own.has(dirname(filename)) || content.startsWith('#!')) return plainCompile.call(this, content, filename, ...rest);
  let cachedData;
  try {
    cachedData = readFileSync(join(cacheDir, `${createHash('sha256').update(content).digest('hex')}.bin`));
  } catch {
    return plainCompile.call(this, content, filename, ...rest);
  }
  compileAndRun(this, content, filename, cachedData);
}

const debugging = process.execArgv.some((a) => /^--(inspect|debug)/.test(a)) || process.env.NODE_OPTIONS?.includes('--inspect');
if (!process.sourceMapsEnabled && !debugging) Module.prototype._compile = cachedCompile;
require('./main.js');
