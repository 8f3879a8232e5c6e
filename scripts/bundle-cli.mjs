// Bundles the CLI (dist/cli/main.js, tsc's output) into dist/bin/acia.js plus chunks for what it loads
// lazily. Node resolves, reads and links every ES module file one by one: `acia run` touched about 600
// of them before its first model request, which cost more than half of its start-up. The bundle is what
// `bin` points at; the library (`acia`, `acia/testing`) stays tsc's one-module-per-file output.
//
// Bundled: ACIA's own code and the dependencies a run needs before its first request (zod, the
// Anthropic SDK, commander, chalk, picomatch, ignore). Left as imports of node_modules: the ones loaded
// only on demand (databases, the MCP and ACP SDKs, yaml, openai), so they behave exactly as published.
// They are require()d from the CommonJS bundle; the ACP SDK ships only as ES modules, which node loads
// through require() from 20.19 on (package.json's engines).
import { build } from 'rolldown';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const bundled = new Set(['zod', '@anthropic-ai/sdk', 'commander', 'chalk', 'picomatch', 'ignore']);
const externalPackages = Object.keys(pkg.dependencies).filter((d) => !bundled.has(d));
for (const d of bundled) if (!(d in pkg.dependencies)) throw new Error(`bundle-cli: ${d} is not a dependency any more`);

rmSync('dist/bin', { recursive: true, force: true });
await build({
  input: { acia: 'dist/cli/main.js' },
  platform: 'node',
  external: (id) => id.startsWith('node:') || externalPackages.some((d) => id === d || id.startsWith(`${d}/`)),
  logLevel: 'warn',
  output: {
    dir: 'dist/bin',
    // CommonJS: node 20 loads the same code as ES modules ~65 ms slower (its ESM loader resolves, links
    // and evaluates each chunk through async module jobs), measured on `acia run`'s first request.
    format: 'cjs',
    // Every file strict, as the ES modules it came from were: a write to a frozen object must throw.
    strict: true,
    entryFileNames: '[name].js',
    chunkFileNames: 'chunks/[name]-[hash].js',
    sourcemap: true,
  },
});
// Under the package's "type": "module", .js means ES module: this directory says CommonJS.
writeFileSync('dist/bin/package.json', `${JSON.stringify({ type: 'commonjs' })}\n`);
chmodSync('dist/bin/acia.js', 0o755);
