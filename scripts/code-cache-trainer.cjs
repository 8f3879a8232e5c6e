'use strict';
// Preloaded (node -r) into one `acia run` the build makes (scripts/bundle-cli.mjs): compiles the bundle's
// files as the launcher does (scripts/cli-launcher.cjs) and, when the process exits, writes each one's
// code cache to $ACIA_CODE_CACHE_OUT, named by the sha256 of its source. Written after the run, a cache
// also holds the functions the run compiled on the way to its first model request, not only the
// top-level code a cache made from the bare source has. Build-time only: the CLI never writes a cache.
const Module = require('node:module');
const { createHash } = require('node:crypto');
const { writeFileSync } = require('node:fs');
const { dirname, join } = require('node:path');
const { compileAndRun } = require('./cached-compile.cjs');

const out = process.env.ACIA_CODE_CACHE_OUT;
const bin = process.env.ACIA_CODE_CACHE_BIN;
if (out && bin) {
  const own = new Set([bin, join(bin, 'chunks')]);
  const scripts = [];
  const plainCompile = Module.prototype._compile;
  Module.prototype._compile = function (content, filename, ...rest) {
    if (!own.has(dirname(filename)) || content.startsWith('#!')) return plainCompile.call(this, content, filename, ...rest);
    scripts.push({ script: compileAndRun(this, content, filename), name: `${createHash('sha256').update(content).digest('hex')}.bin` });
  };
  process.on('exit', () => {
    for (const { script, name } of scripts) writeFileSync(join(out, name), script.createCachedData());
  });
}
