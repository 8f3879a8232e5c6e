// Runs the test files in one node process: `node run-tests.js [file or folder ...]`, by default every
// .js, .mjs and .cjs file under test/, as `node --test test/` finds them. `node --test` would start a
// process per file on top of its own: three processes, and about three times the CPU, for this suite.
// A failing test sets the exit code to 1; a file that cannot load is reported as a failing test named
// after it, and the other files still run.
import { readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const roots = process.argv.length > 2 ? process.argv.slice(2) : [fileURLToPath(new URL('./test/', import.meta.url))];
const files = [];
for (const root of roots.map((r) => resolve(r))) {
  if (!statSync(root).isDirectory()) files.push(root);
  else for (const name of readdirSync(root, { recursive: true })) if (/\.[cm]?js$/.test(name) && !name.split('/').includes('node_modules')) files.push(join(root, name));
}
for (const file of files.sort()) {
  try {
    await import(pathToFileURL(file).href);
  } catch (err) {
    test(relative(process.cwd(), file), () => {
      throw err;
    });
  }
}
