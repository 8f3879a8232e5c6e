// `acia say <run> --db`: messages to a fleet run. A fleet run has no inbox directory anyone can write to
// (its orchestrator and its task workers are other machines), so a message is a row of `acia_messages`.
// Row-level security lets a submitter's role add rows only for a run it submitted, in its own name
// (`sender` is the session's role, which it cannot set); the workers, as the tables' owner, take them.
// Each row is claimed by the session that runs its recipient: the worker running the task's job, else the
// run's orchestrator (the PM, and tasks not out on a job). The taker records it in the run's ledger like a
// local inbox file, so every reader and a replay see one MESSAGE_RECEIVED, and deletes the row only then:
// a session that cannot record it (fenced after a takeover, the database gone between the two) loses nothing.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { checkMessageText, checkRecipient, type SayResult } from '../app/say-run.js';
import { whoAmI } from '../app/who-am-i.js';
import { requireRunId } from '../core/contain/run-id.js';
import { MAX_MESSAGE_BYTES, MessageRequest, newMessageId, type MessageMode, type TakenMessage } from '../core/contain/message-request.js';
import { AciaError } from '../core/errors.js';
import { parseLedgerLine } from '../core/ledger/line-reader.js';
import { foldRun } from '../core/run/reducer.js';
import type { MessageSource } from '../team/mailbox.js';
import type { FleetClient } from './fleet-db.js';

/** The table, its limits, its row-level security and the submitters' grants (run by the owner after TENANCY_SCHEMA, idempotent). */
export const MESSAGES_SCHEMA = `
CREATE TABLE IF NOT EXISTS acia_messages (
  run_id text NOT NULL,
  id text NOT NULL CHECK (id ~ '^m-[0-9a-z-]{6,64}$'),
  sender text NOT NULL DEFAULT current_user,
  author text NOT NULL CHECK (octet_length(author) BETWEEN 1 AND 200),
  to_task text NOT NULL CHECK (octet_length(to_task) BETWEEN 1 AND 128),
  mode text NOT NULL CHECK (mode IN ('queue', 'steer', 'interrupt')),
  body text NOT NULL CHECK (octet_length(body) BETWEEN 1 AND ${MAX_MESSAGE_BYTES}),
  sent_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, id)
);
-- A session claims a row, records it in the run's ledger, then deletes it; a claim it could not follow up
-- (it died, or could not record) lapses, and the row is taken again (a ledger that has it skips it).
ALTER TABLE acia_messages ADD COLUMN IF NOT EXISTS taken_by text, ADD COLUMN IF NOT EXISTS taken_at timestamptz;
ALTER TABLE acia_messages ENABLE ROW LEVEL SECURITY;
-- In its own name, to its own unfinished runs only: the run's submitter is the one who may direct its team.
DROP POLICY IF EXISTS acia_messages_own ON acia_messages;
CREATE POLICY acia_messages_own ON acia_messages
  USING (sender = current_user::text AND EXISTS (SELECT 1 FROM acia_runs r WHERE r.run_id = acia_messages.run_id AND r.submitter = current_user::text))
  WITH CHECK (sender = current_user::text AND EXISTS (SELECT 1 FROM acia_runs r WHERE r.run_id = acia_messages.run_id AND r.submitter = current_user::text AND r.status IN ('queued', 'running', 'awaiting_human', 'budget_exhausted')));
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'acia_submitter') THEN
    GRANT SELECT, INSERT (run_id, id, author, to_task, mode, body) ON acia_messages TO acia_submitter;
  END IF;
END $$;
`;

export interface FleetSayOptions {
  runId: string;
  /** A task id; the PM when absent. */
  task?: string;
  mode?: MessageMode;
  text: string;
  /** Who speaks (default `<user>@<host>`); the ledger adds the database role that sent it. */
  author?: string;
}

/**
 * Sends a message to fleet run `runId` as this session's role: refused, before anything is written, as
 * `acia say` refuses (a finished run or task, a task no plan has), and for a run that is not this role's.
 *
 * @throws AciaError USAGE, RUN_NOT_FOUND (no such run of yours, or not started yet), RUN_FINISHED.
 */
export async function sayToFleetRun(fleet: FleetClient, o: FleetSayOptions): Promise<SayResult> {
  requireRunId(o.runId, 'the fleet database', 'list fleet runs with `acia runs --db ...`');
  const text = checkMessageText(o.text);
  const row = (await fleet.db.query<{ status: string }>('SELECT status FROM acia_runs WHERE run_id = $1', [o.runId])).rows[0];
  if (!row) throw new AciaError('RUN_NOT_FOUND', `no fleet run ${o.runId} that you submitted`, { hint: 'a fleet run belongs to the database role that submitted it; list yours with `acia runs --db ...`' });
  const lines = (await fleet.db.query<{ line: string }>('SELECT line FROM acia_ledger WHERE run_id = $1 ORDER BY seq', [o.runId])).rows;
  if (lines.length === 0) throw new AciaError('RUN_NOT_FOUND', `fleet run ${o.runId} has not started yet (${row.status}); there is nobody to message`, { hint: `send it once its plan shows: acia logs ${o.runId} --db --follow` });
  const to = o.task ?? 'pm';
  checkRecipient(foldRun(lines.map((l, i) => parseLedgerLine(l.line, `run ${o.runId} row ${i + 1}`))), o.runId, to, ' --db');
  const mode = o.mode ?? 'queue';
  const id = newMessageId();
  await fleet.db.query('INSERT INTO acia_messages (run_id, id, author, to_task, mode, body) VALUES ($1, $2, $3, $4, $5, $6)', [o.runId, id, (o.author ?? whoAmI()).slice(0, 120), to, mode, text]);
  return { runId: o.runId, id, to, mode };
}

/** How many messages one poll takes at most. */
const TAKE_LIMIT = 32;

/** A name as the ledger and the agents' prompts show it: no control characters, at most 120 characters. */
function givenName(name: string): string {
  return ([...name].filter((c) => c.charCodeAt(0) >= 0x20 && c.charCodeAt(0) !== 0x7f).join('').trim() || '?').slice(0, 120);
}

/** Which recipients a session takes messages for: its own task, or everything but the tasks out on jobs. */
export type Recipients = { only: string } | { except: () => readonly string[] };

/** How long a claim holds: a session that claimed rows and died gives them back after this. */
const CLAIM_SECONDS = 60;

/**
 * A worker session's message source for run `runId`: each poll claims the rows of its recipients, oldest
 * first, and deletes them once recorded. The author recorded names the database role that sent it, which
 * the sender cannot choose, beside the name it gave.
 */
export function fleetMessages(db: pg.Pool, runId: string, recipients: Recipients): MessageSource {
  return async () => {
    const only = 'only' in recipients ? [recipients.only] : null;
    const except = 'except' in recipients ? [...recipients.except()] : null;
    const claim = randomUUID();
    // Not retried: a poll that fails leaves the rows for the next one (the mailbox polls again shortly).
    // At most TAKE_LIMIT a poll, oldest first: a submitter flooding its run cannot make one poll load them all.
    const r = await db.query<{ id: string; sender: string; author: string; to_task: string; mode: string; body: string; sent_at: Date }>(
      `UPDATE acia_messages SET taken_by = $4, taken_at = now() WHERE (run_id, id) IN (
         SELECT run_id, id FROM acia_messages WHERE run_id = $1 AND ($2::text[] IS NULL OR to_task = ANY($2)) AND ($3::text[] IS NULL OR to_task <> ALL($3))
           AND (taken_at IS NULL OR taken_at < now() - interval '${CLAIM_SECONDS} seconds')
         ORDER BY sent_at, id LIMIT ${TAKE_LIMIT} FOR UPDATE SKIP LOCKED)
       RETURNING id, sender, author, to_task, mode, body, sent_at`,
      [runId, only, except, claim],
    );
    const rows = r.rows.sort((a, b) => a.sent_at.getTime() - b.sent_at.getTime() || (a.id < b.id ? -1 : 1));
    const ids = rows.map((m) => m.id);
    const settle = async (sql: string) => {
      if (ids.length > 0) await db.query(sql, [runId, ids, claim]);
    };
    return {
      messages: rows.map((m): TakenMessage => {
        // The name the sender gave is cut before the role is added, so no name can push the role out of the record.
        const parsed = MessageRequest.safeParse({ id: m.id, author: `${givenName(m.author)} (fleet role ${givenName(m.sender)})`, to: m.to_task, mode: m.mode, text: m.body, sentAt: m.sent_at.toISOString() });
        return parsed.success ? { ok: true, request: parsed.data } : { ok: false, file: `acia_messages ${m.id}`, why: 'it is not a message request' };
      }),
      done: () => settle('DELETE FROM acia_messages WHERE run_id = $1 AND id = ANY($2) AND taken_by = $3'),
      release: () => settle('UPDATE acia_messages SET taken_by = NULL, taken_at = NULL WHERE run_id = $1 AND id = ANY($2) AND taken_by = $3'),
    };
  };
}
