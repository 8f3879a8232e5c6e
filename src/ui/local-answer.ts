// An answer given on the page is `acia resume <runId> --repo <repo> --answer <text>`, run as that very
// command: the CLI checks it against the escalation's options, records HUMAN_RESPONSE and goes on with
// the run, exactly as when the user types it. No second way of recording an answer exists.
// It is the one process the ui server starts, through the containment module like every host process.
import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnHostProcess } from '../core/contain/host-process.js';
import { packagePath } from '../core/package-root.js';
import { EXIT } from '../app/exit-codes.js';
import type { AnswerOutcome } from './store.js';

export interface ResumeRequest {
  repo: string;
  runId: string;
  text: string;
  env: NodeJS.ProcessEnv;
  /** Settles when the run's ledger holds the human's answer. */
  recorded: Promise<void>;
  timeoutMs?: number;
}

let logDir: string | null = null;

/**
 * Starts the resume and settles once the answer is in the ledger (ok), or the command stopped without
 * recording it (its `acia:` line). The run then goes on in that process; its output goes to a private
 * log file, so it never writes to a pipe that dies with the ui server.
 */
export function answerWithResume(r: ResumeRequest): Promise<AnswerOutcome> {
  logDir ??= mkdtempSync(join(tmpdir(), 'acia-ui-'));
  const log = join(logDir, `resume-${r.runId}-${Date.now()}.log`);
  const fd = openSync(log, 'w', 0o600);
  const child = spawnHostProcess(
    { command: process.execPath, args: [packagePath('dist', 'bin', 'acia.js'), 'resume', r.runId, '--repo', r.repo, '--answer', r.text], env: r.env, writable: [r.repo], what: 'acia resume' },
    ['ignore', fd, fd],
  );
  closeSync(fd);
  return new Promise<AnswerOutcome>((resolve) => {
    let settled = false;
    const settle = (o: AnswerOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    const timer = setTimeout(() => settle({ ok: false, message: `no answer was recorded within ${Math.round((r.timeoutMs ?? 60_000) / 1000)} s; see ${log}` }), r.timeoutMs ?? 60_000);
    r.recorded.then(() => settle({ ok: true }), () => undefined);
    child.on('error', (e) => settle({ ok: false, message: `cannot start acia resume: ${e.message}` }));
    child.on('exit', (code) => {
      // A refused answer (exit 2) recorded nothing. Any other end may have come after the answer was
      // recorded, before the ledger watch said so: that gets a few seconds to show.
      if (code === EXIT.USAGE) settle({ ok: false, message: firstError(log) });
      else setTimeout(() => settle({ ok: false, message: firstError(log) }), 5000).unref();
    });
  });
}

function firstError(log: string): string {
  let text = '';
  try {
    text = readFileSync(log, 'utf8');
  } catch {
    // fall through to the generic message
  }
  const line = text.split('\n').find((l) => l.startsWith('acia: '));
  return line ? line.slice('acia: '.length) : `acia resume stopped without recording the answer; see ${log}`;
}
