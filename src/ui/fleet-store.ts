// A fleet's runs for `acia ui`, read from its PostgreSQL ledger as the connecting role sees them (row-level
// security shows a submitter only its own runs). New entries are announced by the ledger's insert trigger
// (NOTIFY acia_ledger, core/ledger/pg-ledger.ts); against a database made before that trigger, the store
// asks for each run's last seq every two seconds instead (never the rows).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import type { LedgerEntry } from '../core/ledger/entry.js';
import { isRunId } from '../core/contain/run-id.js';
import { AciaError, errorMessage } from '../core/errors.js';
import { parseLedgerLine } from '../core/ledger/line-reader.js';
import { LEDGER_CHANNEL } from '../core/ledger/pg-ledger.js';
import { verifyRun } from '../core/ledger/verify.js';
import { connectFleetDb, databaseUrl, openFleetClient, type FleetClient } from '../fleet/fleet-db.js';
import { exportRun } from '../fleet/export.js';
import { answerRun } from '../fleet/submit.js';
import type { AnswerOutcome, RunStore, VerifyStatus } from './store.js';

const PAGE = 2000;
const isMissingTable = (e: unknown): boolean => (e as { code?: string }).code === '42P01';

/** The database as the page names it: host, port and database, never the user or password. */
export function safeDbLabel(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return 'the fleet database';
  }
}

export async function fleetStore(dbFlag: string | undefined, env: NodeJS.ProcessEnv): Promise<RunStore> {
  const url = databaseUrl(dbFlag, env);
  const db = await connectFleetDb(url, 4);
  let fleet: Promise<FleetClient> | null = null;
  const listRunIds = async (): Promise<string[]> => {
    try {
      const r = await db.query<{ run_id: string }>('SELECT DISTINCT run_id FROM acia_ledger ORDER BY run_id');
      // Ids from the database become URL parts and temp directory names: only run ids are shown.
      return r.rows.map((x) => x.run_id).filter((id) => isRunId(id));
    } catch (e) {
      if (isMissingTable(e)) return [];
      throw e;
    }
  };

  return {
    label: safeDbLabel(url),
    kind: 'fleet',
    listRunIds,

    async read(runId, from, until) {
      const r = await db.query<{ line: string }>(
        `SELECT line FROM acia_ledger WHERE run_id = $1 AND seq >= $2 ${until === undefined ? '' : 'AND seq < $4'} ORDER BY seq LIMIT $3`,
        until === undefined ? [runId, from.seq, PAGE] : [runId, from.seq, PAGE, until],
      );
      const entries: LedgerEntry[] = [];
      let seq = from.seq;
      for (const row of r.rows) {
        const e = parseLedgerLine(row.line, `${runId}@${seq}`);
        if (e.seq !== seq) throw new AciaError('LEDGER_CORRUPT', `run ${runId}: seq ${e.seq} where ${seq} was expected`);
        entries.push(e);
        seq++;
      }
      return { entries, cursor: { seq, offset: 0 } };
    },

    watch(changed) {
      let stopped = false;
      let client: pg.PoolClient | null = null;
      let timer: NodeJS.Timeout | null = null;
      const heads = new Map<string, number>();
      const poll = async (): Promise<void> => {
        const r = await db.query<{ run_id: string; head: number }>('SELECT run_id, max(seq) AS head FROM acia_ledger GROUP BY run_id').catch(() => null);
        for (const row of r?.rows ?? []) {
          if (heads.get(row.run_id) === row.head) continue;
          if (!heads.has(row.run_id)) changed(null);
          heads.set(row.run_id, row.head);
          changed(row.run_id);
        }
      };
      const fallBack = (): void => {
        if (!stopped && timer === null) timer = setInterval(() => void poll(), 2000);
      };
      // Whatever was appended before LISTEN took effect is read once it has.
      const catchUp = async (): Promise<void> => {
        changed(null);
        for (const id of await listRunIds().catch(() => [])) changed(id);
      };
      // Notifications in a burst (a busy run, many runs) become one catch-up at a time, plus one after it.
      let running: Promise<void> | null = null;
      let again = false;
      const wake = (): void => {
        if (running) {
          again = true;
          return;
        }
        running = catchUp().finally(() => {
          running = null;
          if (again) {
            again = false;
            wake();
          }
        });
      };
      void (async () => {
        try {
          const trigger = await db.query("SELECT 1 FROM pg_trigger WHERE tgname = 'acia_ledger_notify'");
          if (trigger.rowCount === 0) throw new Error('no trigger');
          client = await db.connect();
          // The notification names no run (another submitter listens on the same channel): every run this
          // role can see is asked for what it gained since its cursor, one indexed range read each.
          client.on('notification', () => wake());
          // A listener that loses its connection hears nothing more: the store asks instead.
          client.on('error', () => {
            client?.release(true);
            client = null;
            fallBack();
          });
          await client.query(`LISTEN ${LEDGER_CHANNEL}`);
          if (stopped) client.release(true);
          else await catchUp();
        } catch {
          client?.release(true);
          client = null;
          fallBack();
        }
      })();
      return () => {
        stopped = true;
        if (timer) clearInterval(timer);
        client?.release(true);
      };
    },

    async blob(runId, ref, maxBytes) {
      if (!/^sha256:[0-9a-f]{64}$/.test(ref)) return null;
      const r = await db.query<{ content: Buffer }>('SELECT content FROM acia_blobs WHERE run_id = $1 AND ref = $2', [runId, ref]);
      const bytes = r.rows[0]?.content;
      if (bytes === undefined) return null;
      return { bytes: bytes.subarray(0, maxBytes), truncated: bytes.length > maxBytes };
    },

    async verify(runId): Promise<VerifyStatus> {
      // As `acia verify <runId> --db` does: the run copied out, checked against the head the worker
      // anchored in acia_runs.
      const repo = await mkdtemp(join(tmpdir(), 'acia-ui-verify-'));
      try {
        const { dir } = await exportRun(db, runId, repo, process.env, { anchor: false });
        const rows = await db.query<{ status: string; head_seq: number | null; head_hash: string | null }>('SELECT status, head_seq, head_hash FROM acia_runs WHERE run_id = $1', [runId]).catch((e: unknown) => {
          if (isMissingTable(e)) return { rows: [] };
          throw e;
        });
        const row = rows.rows[0];
        const anchor =
          row && row.head_seq !== null && row.head_hash !== null
            ? { runId, runDir: dir, head: { seq: row.head_seq, hash: row.head_hash }, status: ['queued', 'running'].includes(row.status) ? 'running' : row.status, updatedAt: new Date(0).toISOString() }
            : null;
        const r = await verifyRun(dir, { anchor });
        return { ok: r.ok, entries: r.entries, problems: r.problems.slice(0, 20) };
      } finally {
        await rm(repo, { recursive: true, force: true }).catch(() => undefined);
      }
    },

    // Checkpoints live in the fleet's git remote, not here.
    diff: () => Promise.resolve(null),

    async answer(runId, text): Promise<AnswerOutcome> {
      // `acia resume <runId> --answer <text> --db`: the same client and answerRun, so a submitter answers
      // only its own runs (row-level security) and a worker records HUMAN_RESPONSE when it resumes the run.
      try {
        fleet ??= openFleetClient(url);
        await answerRun(await fleet, runId, text);
        return { ok: true };
      } catch (e) {
        return { ok: false, message: errorMessage(e) };
      }
    },

    async close() {
      if (fleet) await (await fleet.catch(() => null))?.close();
      await db.end().catch(() => undefined);
    },
  };
}
