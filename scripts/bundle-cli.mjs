// Bundles the CLI (dist/cli/main.js, tsc's output) into dist/bin/main.js plus chunks for what it loads
// lazily. Node resolves, reads and links every ES module file one by one: `acia run` touched about 600
// of them before its first model request, which cost more than half of its start-up. The bundle is what
// `bin` points at; the library (`acia`, `acia/testing`) stays tsc's one-module-per-file output.
//
// Bundled: ACIA's own code and the dependencies a run needs before its first request (zod, the
// Anthropic SDK, commander, chalk, picomatch, ignore). Left as imports of node_modules: the ones loaded
// only on demand (databases, the MCP and ACP SDKs, yaml, openai), so they behave exactly as published.
// They are require()d from the CommonJS bundle; the ACP SDK ships only as ES modules, which node loads
// through require() from 20.19 on (package.json's engines).
//
// dist/bin/acia.js is scripts/cli-launcher.cjs: it loads the bundle (main.js, chunks/) with the V8 code
// cache written below to code-cache/, one file per bundle file named by the sha256 of its source.
import { build } from 'rolldown';
import { parseAst } from 'rolldown/parseAst';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { Module } from 'node:module';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { trainCodeCache } from './train-code-cache.mjs';

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const bundled = new Set(['zod', '@anthropic-ai/sdk', 'commander', 'chalk', 'picomatch', 'ignore']);
const externalPackages = Object.keys(pkg.dependencies).filter((d) => !bundled.has(d));
for (const d of bundled) if (!(d in pkg.dependencies)) throw new Error(`bundle-cli: ${d} is not a dependency any more`);

rmSync('dist/bin', { recursive: true, force: true });
await build({
  input: { main: 'dist/cli/main.js' },
  platform: 'node',
  external: (id) => id.startsWith('node:') || externalPackages.some((d) => id === d || id.startsWith(`${d}/`)),
  logLevel: 'warn',
  output: {
    dir: 'dist/bin',
    // CommonJS: node 20 loads the same code as ES modules ~65 ms slower (its ESM loader resolves, links
    // and evaluates each chunk through async module jobs), measured on `acia run`'s first request.
    format: 'cjs',
    // A package left external and imported on demand is require()d too (node loads ES modules that way
    // from 20.19 on): code compiled with a code cache (vm.Script) has no loader for import().
    dynamicImportInCjs: false,
    // Every file strict, as the ES modules it came from were: a write to a frozen object must throw.
    strict: true,
    entryFileNames: '[name].js',
    chunkFileNames: 'chunks/[name]-[hash].js',
    sourcemap: true,
  },
});
// Under the package's "type": "module", .js means ES module: this directory says CommonJS.
writeFileSync('dist/bin/package.json', `${JSON.stringify({ type: 'commonjs' })}\n`);
copyFileSync('scripts/cli-launcher.cjs', 'dist/bin/acia.js');
copyFileSync('scripts/cached-compile.cjs', 'dist/bin/cached-compile.cjs');
// main.js is required by the launcher, not run: its #! line (kept as a comment, so lines stay) would
// be a syntax error inside the wrapper the code cache is made with.
writeFileSync('dist/bin/main.js', readFileSync('dist/bin/main.js', 'utf8').replace(/^#!/, '//'));
chmodSync('dist/bin/acia.js', 0o755);

// The code cache: what V8 compiles of each file up front, as the launcher will compile it (node's
// CommonJS wrapper around the source). Made by this node: another node's V8 refuses it and compiles.
// Then one run trains the caches of the files `acia run` loads (scripts/train-code-cache.mjs).
mkdirSync('dist/bin/code-cache');
const files = ['dist/bin/main.js', ...readdirSync('dist/bin/chunks').filter((f) => f.endsWith('.js')).map((f) => join('dist/bin/chunks', f))];
for (const file of files) {
  const source = readFileSync(file, 'utf8');
  if (hasImportExpression(parseAst(source))) throw new Error(`bundle-cli: ${file} calls import(), which code loaded from the cache cannot: import that module statically or with require`);
  const data = new Script(Module.wrap(source), { filename: file }).createCachedData();
  writeFileSync(join('dist/bin/code-cache', `${createHash('sha256').update(source).digest('hex')}.bin`), data);
}

await trainCodeCache('dist/bin', 'dist/bin/code-cache');

function hasImportExpression(node) {
  if (node === null || typeof node !== 'object') return false;
  if (node.type === 'ImportExpression') return true;
  return Object.values(node).some((v) => (Array.isArray(v) ? v.some(hasImportExpression) : typeof v === 'object' && hasImportExpression(v)));
}
