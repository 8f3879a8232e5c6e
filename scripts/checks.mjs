// The static half of `npm test`: build, typecheck, lint and knip at the same time. They read the same
// sources and write nothing another one reads (only build writes, to dist/, which none of them read),
// and no one of them fills both cores for long, so together they take about as long as the slowest
// (eslint's type-checked rules) instead of the sum. Each one's output is printed whole when it ends.
import { spawn } from 'node:child_process';

const CHECKS = [
  ['build', 'npm', ['run', '--silent', 'build']],
  ['typecheck', 'npm', ['run', '--silent', 'typecheck']],
  ['lint', 'npm', ['run', '--silent', 'lint']],
  ['knip', 'npm', ['run', '--silent', 'knip']],
];

const started = Date.now();

function run([name, cmd, args]) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', (e) => {
      out += `${e.message}\n`;
    });
    child.on('close', (code, signal) => {
      const ok = code === 0;
      const secs = ((Date.now() - t0) / 1000).toFixed(1);
      process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${name} (${secs} s)${ok ? '' : `: exit ${code ?? signal}`}\n`);
      if (out.trim() !== '') process.stdout.write(`${out.trimEnd()}\n`);
      resolve(ok);
    });
  });
}

const results = await Promise.all(CHECKS.map(run));
process.stdout.write(`checks: ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
if (results.includes(false)) process.exit(1);
