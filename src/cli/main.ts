#!/usr/bin/env node
// The acia entry point: a fast path for --version, then commander with each command's work loaded lazily.
import { readFileSync } from 'node:fs';
import { packagePath } from '../core/package-root.js';

// A reader that goes away (`acia runs | head`) is not an error worth a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
}

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  process.stdout.write(`${readVersion()}\n`);
} else {
  // No top-level await: the bundled CLI is CommonJS (scripts/bundle-cli.mjs says why). A rejection here
  // stays unhandled, which ends the process with its stack and exit 1, as a top-level await did. A
  // command whose promise never settles while nothing else is left to run still must not look like a
  // success: node's exit code for an unsettled top-level await, 13, with a line saying so.
  let settled = false;
  process.once('beforeExit', () => {
    if (settled) return;
    process.stderr.write('acia: internal error: the command stopped waiting on something that can no longer happen\n');
    process.exitCode = 13;
  });
  void import('./run-cli.js').then(async ({ runCli }) => {
    process.exitCode = await runCli(argv, readVersion());
    settled = true;
  });
}

function readVersion(): string {
  const pkg = JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string };
  return pkg.version;
}
