// The CLI on a real terminal: util-linux `script` gives it a pty, and the test types each answer once a
// new prompt shows.
import { spawn, spawnSync } from 'node:child_process';
import { CLI } from './helpers.js';
import { cliEnv } from './cli-helpers.js';

export const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout.includes('util-linux');

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

const PROMPT = /one of: [a-z, ]+\)/g;

/** Runs the CLI on a pty; types `answers[i]` (and Enter) when the (i+1)th prompt appears. */
export function onTty(args: string[], answers: readonly string[], env: Record<string, string> = {}): Promise<{ code: number; transcript: string; prompts: number }> {
  const cmd = [process.execPath, CLI, ...args].map(shellQuote).join(' ');
  const child = spawn('script', ['-qec', cmd, '/dev/null'], { env: cliEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
  let transcript = '';
  let typed = 0;
  const onData = (d: Buffer) => {
    transcript += d.toString();
    const prompts = transcript.match(PROMPT)?.length ?? 0;
    while (typed < prompts && typed < answers.length) child.stdin.write(`${answers[typed++]!}\r`);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? 1, transcript, prompts: transcript.match(PROMPT)?.length ?? 0 })));
}
