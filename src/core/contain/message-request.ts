// Messages for a running run: one file each in `inbox/` beside its ledger (`.acia/runs/<runId>/inbox/`).
// `acia say` (and MCP, the web view) writes one; the session running the run takes them in, records
// them, and only then deletes them. Files, like `acia cancel`'s request, not a signal or a socket:
// nothing reaches a stale pid, a message waits for a run that is not running now, and whoever may write
// the run's directory may send one. A message is also an instruction to the agents, so the session takes
// a file only when this user owns it (another local user who can write a shared checkout cannot speak as
// its owner), never through a link, and never one larger than a message can be.
import { lstatSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { readRegularAt, writeRegularFile } from './no-follow.js';
import { runDirOf } from './acia-state.js';

const INBOX = 'inbox';
/** A message is words for an agent: 16 KB is pages of them, and bounds what a file can make a session read. */
export const MAX_MESSAGE_BYTES = 16 * 1024;

export const MessageMode = z.enum(['queue', 'steer', 'interrupt']);
export type MessageMode = z.infer<typeof MessageMode>;

export const MessageRequest = z.strictObject({
  id: z.string().regex(/^m-[0-9a-z-]{6,64}$/),
  author: z.string().min(1).max(200),
  /** A task id, or `pm`. */
  to: z.string().min(1).max(128),
  mode: MessageMode,
  text: z.string().min(1).max(MAX_MESSAGE_BYTES),
  sentAt: z.string().max(64),
});
export type MessageRequest = z.infer<typeof MessageRequest>;

/** A fresh message id: sortable by time, unique without coordination. */
export function newMessageId(now: Date = new Date()): string {
  return `m-${now.getTime().toString(36)}-${randomBytes(4).toString('hex')}`;
}

/** Writes a message for run `runId` of `repo` (the id is checked; no link on the way is followed). */
export function writeMessageRequest(repo: string, runId: string, request: MessageRequest): void {
  const checked = MessageRequest.parse(request);
  writeRegularFile(repo, join(runDirOf(repo, runId), INBOX, `${checked.id}.json`), `${JSON.stringify(checked)}\n`);
}

export type TakenMessage = { ok: true; request: MessageRequest } | { ok: false; file: string; why: string };

/**
 * What one look at a message source took. Nothing is gone from the source until `done`: the session calls
 * it once every message is recorded, so a session that cannot record them (a full disk, a fenced fleet
 * session) leaves them for the next look, its own or its successor's, which skips those its ledger has.
 */
export interface TakenBatch {
  messages: TakenMessage[];
  /** Every message is recorded (or dropped unrecorded): remove them from the source. */
  done(): Promise<void>;
  /** Not recorded: give them back now (a claim that would otherwise lapse), or leave them be. */
  release(): Promise<void>;
}

/**
 * Takes every message in a run directory's inbox (one the caller has checked: its own session's), oldest
 * first. Files this user does not own, links, special files and files that do not parse are removed at
 * once and reported, never taken; a message's file is removed by the batch's `done`, after it is recorded.
 */
export function takeMessageRequests(runDir: string, uid: number | null = process.getuid?.() ?? null): TakenBatch {
  const dir = join(runDir, INBOX);
  const taken: string[] = [];
  const batch = (messages: TakenMessage[]): TakenBatch => ({
    messages,
    done: () => {
      for (const file of taken) remove(file);
      return Promise.resolve();
    },
    release: () => Promise.resolve(),
  });
  let names: string[];
  try {
    const st = lstatSync(dir);
    if (!st.isDirectory()) return batch([{ ok: false, file: dir, why: 'the inbox is not a directory' }]);
    if (uid !== null && st.uid !== uid) return batch([{ ok: false, file: dir, why: `the inbox belongs to uid ${st.uid}, not to you` }]);
    names = readdirSync(dir).filter((n) => n.endsWith('.json')).sort();
  } catch {
    return batch([]);
  }
  const out: TakenMessage[] = [];
  for (const name of names) {
    const file = join(dir, name);
    const read = readRegularAt(file, MAX_MESSAGE_BYTES * 2);
    const refuse = (why: string) => {
      remove(file);
      out.push({ ok: false, file, why });
    };
    if (read === 'missing') continue;
    if (typeof read === 'string') refuse(read === 'too-large' ? 'it is larger than a message may be' : `it is a ${read === 'symlink' ? 'link' : 'special file'}`);
    else if (uid !== null && read.uid !== uid) refuse(`it belongs to uid ${read.uid}: only the user running the run may message it`);
    else {
      const parsed = MessageRequest.safeParse(safeJson(read.content.toString('utf8')));
      if (!parsed.success) refuse('it is not a message request');
      else {
        taken.push(file);
        out.push({ ok: true, request: parsed.data });
      }
    }
  }
  return batch(out);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function remove(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Gone already (another reader, or never a file).
  }
}
