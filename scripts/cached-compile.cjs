'use strict';
// How the launcher (scripts/cli-launcher.cjs) and the build's cache trainer (scripts/code-cache-trainer.cjs)
// compile a bundle file instead of node's CommonJS loader: the same wrapper as node's, through vm.Script,
// so a cache the build makes fits what the launcher compiles. Copied to dist/bin/ beside the launcher.
const Module = require('node:module');
const { dirname } = require('node:path');
const vm = require('node:vm');

/** Compiles `content` (with `cachedData` when given) and runs it as module `mod`; returns the script. */
function compileAndRun(mod, content, filename, cachedData) {
  const script = new vm.Script(Module.wrap(content), { filename, ...(cachedData ? { cachedData } : {}) });
  const req = (id) => mod.require(id);
  req.resolve = (request, options) => Module._resolveFilename(request, mod, false, options);
  req.resolve.paths = (request) => Module._resolveLookupPaths(request, mod);
  Object.defineProperty(req, 'main', { get: () => process.mainModule });
  req.cache = Module._cache;
  req.extensions = Module._extensions;
  script.runInThisContext({ displayErrors: true }).call(mod.exports, mod.exports, req, mod, filename, dirname(filename));
  return script;
}

module.exports = { compileAndRun };
