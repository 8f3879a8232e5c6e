// `acia say <runId>` for a local run, for the CLI and every front end (MCP, ACP): a message for the PM or
// one task of a run, written to the run's inbox (core/contain/message-request.ts), the same per-run request
// mechanism as `acia cancel`. The session running the run takes it in (only a file this user owns), records
// it and hands it to the agent at the point its mode asks for. A message that could never reach its agent
// (the run or the task is finished, the plan has no such task) is refused here, before anything is written.
import { join } from 'node:path';
import { systemClock } from '../core/acm/ids.js';
import { guardAciaState } from '../core/contain/clone-guard.js';
import { requireRunDir } from '../core/contain/acia-state.js';
import { newMessageId, writeMessageRequest, MAX_MESSAGE_BYTES, type MessageMode } from '../core/contain/message-request.js';
import { AciaError } from '../core/errors.js';
import { LEDGER_FILE } from '../core/ledger/file-ledger.js';
import { readLedgerEntries } from '../core/ledger/line-reader.js';
import { foldRun } from '../core/run/reducer.js';
import { finishedReason, type RunState } from '../core/run/state.js';
import { refusalFor } from '../team/mailbox.js';
import { Git, repoRoot } from '../team/git.js';
import { whoAmI } from './who-am-i.js';

export interface SayOptions {
  /** Any directory inside the repository. */
  repo: string;
  runId: string;
  /** A task id; the PM when absent. */
  task?: string;
  mode?: MessageMode;
  text: string;
  /** Who speaks, as recorded in MESSAGE_RECEIVED (default: `<user>@<host>`). */
  author?: string;
}

export interface SayResult {
  runId: string;
  id: string;
  to: string;
  mode: MessageMode;
}

/**
 * Sends a message to a local run.
 *
 * @throws AciaError USAGE (empty or oversized text), RUN_NOT_FOUND, RUN_FINISHED (the run or the task
 *   ended: the message could never be delivered).
 */
export async function sayToRun(o: SayOptions): Promise<SayResult> {
  const text = checkMessageText(o.text);
  const root = await repoRoot(new Git(systemClock), o.repo);
  await guardAciaState(root);
  const runDir = requireRunDir(root, o.runId, { needLedger: true });
  const entries = [];
  for await (const e of readLedgerEntries(join(runDir, LEDGER_FILE))) entries.push(e);
  const to = o.task ?? 'pm';
  checkRecipient(foldRun(entries), o.runId, to, '');
  const mode = o.mode ?? 'queue';
  const id = newMessageId();
  writeMessageRequest(root, o.runId, { id, author: o.author ?? whoAmI(), to, mode, text, sentAt: new Date().toISOString() });
  return { runId: o.runId, id, to, mode };
}

/** A message's text, trimmed, or USAGE: empty, or larger than a message may be. */
export function checkMessageText(raw: string): string {
  const text = raw.trim();
  if (text === '') throw new AciaError('USAGE', 'the message is empty; say what the team should know');
  if (Buffer.byteLength(text) > MAX_MESSAGE_BYTES) throw new AciaError('USAGE', `the message is ${Buffer.byteLength(text)} bytes; a message may be at most ${MAX_MESSAGE_BYTES}`);
  return text;
}

/**
 * Refuses, before anything is written, a message that could never reach `to` (`pm` or a task id) in run
 * `runId` as its ledger folds: RUN_FINISHED (the run or the task ended, or no plan has the task), or
 * RUN_NOT_FOUND (the run never started). `where` is what the hint's commands add (` --db` for the fleet).
 */
export function checkRecipient(state: RunState, runId: string, to: string, where: string): void {
  const see = { hint: `see it with \`acia show ${runId}${where}\`` };
  const finished = finishedReason(state);
  if (finished !== null) throw new AciaError('RUN_FINISHED', `run ${runId} is finished (${finished}); a message can no longer reach it`, see);
  if (!state.started) throw new AciaError('RUN_NOT_FOUND', `run ${runId} was interrupted before it started; there is nobody to message`);
  const refused = refusalFor({ state }, to);
  if (refused !== null) throw new AciaError('RUN_FINISHED', `cannot message ${to === 'pm' ? 'the PM' : `task ${to}`} of run ${runId}: ${refused}`, see);
}
