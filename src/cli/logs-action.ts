// `acia logs <runId> [--follow] [--db]`: one run's events from its ledger, printed as the plain progress
// view prints them while a run works (the same describeEntry over the typed entries), with the time since
// the run's first entry. A fleet run's ledger holds what every worker that ran it wrote (each task attempt
// names its worker), so one command shows the whole run however it was spread. --follow prints entries as
// they are appended until the run's session ends (RUN_COMPLETED), polling the file or the rows.
import { join, resolve } from 'node:path';
import { systemClock } from '../core/acm/ids.js';
import { requireRunDir } from '../core/contain/acia-state.js';
import { requireRunId } from '../core/contain/run-id.js';
import { AciaError } from '../core/errors.js';
import type { LedgerEntry } from '../core/ledger/entry.js';
import { LEDGER_FILE } from '../core/ledger/file-ledger.js';
import { nodeLedgerFs } from '../core/ledger/ledger-fs.js';
import { lockHolder } from '../core/ledger/run-lock.js';
import { parseLedgerLine, readLedgerLines } from '../core/ledger/line-reader.js';
import { retryTransient } from '../core/ledger/pg-retry.js';
import { connectFleetDb, databaseUrl, type DbFlag } from '../fleet/fleet-db.js';
import { Git, repoRoot } from '../team/git.js';
import { elapsedStamp, plainLine } from './progress.js';

export interface LogsFlags {
  repo: string;
  db?: DbFlag;
  follow?: boolean;
  json?: boolean;
  /** Poll interval while following, ms (tests shorten it). */
  pollMs?: number;
}

/** Where a run's entries come from: everything after `afterSeq`, and whether its session may still add more. */
interface EntrySource {
  read(afterSeq: number): Promise<LedgerEntry[]>;
  /** True while a session may append (the run is queued or running). */
  live(): Promise<boolean>;
  close(): Promise<void>;
}

export async function logsCommand(runId: string, f: LogsFlags): Promise<number> {
  const source = f.db === undefined ? await fileSource(resolve(f.repo), runId) : await dbSource(f.db, runId);
  const write = (e: LedgerEntry, first: number) => process.stdout.write(f.json ? `${JSON.stringify(e)}\n` : `${plainLine(elapsedStamp(Date.parse(e.ts) - first), e)}\n`);
  const seen = { first: null as number | null, seq: -1, ended: false };
  try {
    for (;;) {
      for (const e of await source.read(seen.seq)) {
        seen.first ??= Date.parse(e.ts);
        write(e, seen.first);
        seen.seq = e.seq;
        seen.ended = e.type === 'RUN_COMPLETED';
      }
      if (!f.follow || (seen.ended && !(await source.live()))) return 0;
      await new Promise((r) => setTimeout(r, f.pollMs ?? 300));
    }
  } finally {
    await source.close();
  }
}

async function fileSource(dir: string, runId: string): Promise<EntrySource> {
  const repo = await repoRoot(new Git(systemClock), dir);
  const runDir = requireRunDir(repo, runId, { needLedger: true });
  const path = join(runDir, LEDGER_FILE);
  return {
    read: async (afterSeq) => {
      const out: LedgerEntry[] = [];
      // A line still being written (no newline yet) is read on the next poll, once it is whole.
      for await (const line of readLedgerLines(path)) {
        if (!line.terminated || line.lineNo - 1 <= afterSeq) continue;
        out.push(parseLedgerLine(line.text, `${path}:${line.lineNo}`));
      }
      return out;
    },
    // A process holds the run's lock: a session (perhaps a resume) is still writing.
    live: async () => (await lockHolder(nodeLedgerFs, runDir)) !== null,
    close: () => Promise.resolve(),
  };
}

async function dbSource(db: DbFlag, runId: string): Promise<EntrySource> {
  requireRunId(runId, 'the fleet database', 'list fleet runs with `acia runs --db ...`');
  const pool = await connectFleetDb(databaseUrl(db, process.env), 2);
  const status = async () => (await retryTransient(() => pool.query<{ status: string }>('SELECT status FROM acia_runs WHERE run_id = $1', [runId]))).rows[0]?.status ?? null;
  try {
    // Row-level security: another submitter's run is not there.
    if ((await status()) === null) throw new AciaError('RUN_NOT_FOUND', `no fleet run ${runId} that you can see`, { hint: 'a fleet run belongs to the database role that submitted it; list yours with `acia runs --db ...`' });
  } catch (e) {
    await pool.end();
    throw e;
  }
  return {
    read: async (afterSeq) => {
      const rows = await retryTransient(() => pool.query<{ seq: number; line: string }>('SELECT seq, line FROM acia_ledger WHERE run_id = $1 AND seq > $2 ORDER BY seq', [runId, afterSeq]));
      return rows.rows.map((r) => parseLedgerLine(r.line, `run ${runId} in the database, seq ${r.seq}`));
    },
    // Requeued (its worker died) or resumed (an answer): another worker's session adds to it.
    live: async () => ['queued', 'running'].includes((await status()) ?? ''),
    close: () => pool.end(),
  };
}
