// `edit` at the plan approval gate on a terminal: the plan as JSON in the user's $EDITOR (VISUAL, EDITOR,
// else vi), in a private temporary directory. The edited text goes back to the run, which validates it.
// The editor starts as any host process ACIA starts (core/contain): never from the repository's files.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Plan } from '../core/acm/contracts.js';
import { spawnHostProcess } from '../core/contain/host-process.js';

/** The edited plan's text, or null when the editor failed or left it unchanged (said on `output`). */
export async function editInEditor(plan: Plan, output: NodeJS.WritableStream, writable: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<string | null> {
  const dir = mkdtempSync(join(tmpdir(), 'acia-plan-'));
  const file = join(dir, `${plan.id}.json`);
  const before = `${JSON.stringify(plan, null, 2)}\n`;
  try {
    writeFileSync(file, before, { mode: 0o600 });
    const editor = env.VISUAL || env.EDITOR || 'vi';
    // Through the shell, as git runs $EDITOR: the variable may carry arguments (`code --wait`).
    const child = spawnHostProcess({ command: '/bin/sh', args: ['-c', `${editor} "$1"`, 'acia-editor', file], env, writable, what: 'your editor' }, 'inherit');
    const status = await new Promise<string | number | null>((done) => {
      child.once('error', (e) => done(e.message));
      child.once('exit', (code, signal) => done(code ?? signal));
    });
    if (status !== 0) {
      output.write(`the editor (${editor}) exited with ${String(status)}; the plan is unchanged\n`);
      return null;
    }
    const after = readFileSync(file, 'utf8');
    if (after === before) {
      output.write('the plan was not changed; answer approve to run it as it is\n');
      return null;
    }
    return after;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
