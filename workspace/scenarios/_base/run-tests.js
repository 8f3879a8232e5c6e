// Runs every test/*.test.js file in this one node process. `node --test test/` would start a process
// per file on top of its own: three processes, and about three times the CPU, for this small suite.
// A failing test sets the exit code; a test file that cannot load fails the run with its error.
import { readdirSync } from 'node:fs';

const dir = new URL('./test/', import.meta.url);
for (const name of readdirSync(dir).filter((n) => n.endsWith('.test.js')).sort()) {
  await import(new URL(name, dir).href);
}
