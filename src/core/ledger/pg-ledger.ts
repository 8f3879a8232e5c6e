// The PostgreSQL-backed RunLedger for fleet runs: the same sealed, hash-chained entries as the file
// ledger, one row each keyed by (run, seq), so two writers can never fork a chain: the second insert
// of a seq fails, and that writer stops. Blobs live in a table beside them, keyed by content hash.
//
// Fleet writers are fenced (pg-lease.ts): each append is one statement, run by the server as one
// transaction, that locks the run's lease row, checks the writer's epoch is still the current one and
// inserts the entry only if it was sealed on the true tail; a writer behind the others of the same epoch
// (a run's task workers) gets their rows back and seals again on them. A worker whose lease was taken
// over is refused there, before its entry can join the chain.
import type { Pool, PoolClient } from 'pg';
import { sha256Hex } from '../acm/canonical-json.js';
import { asRunId, type Clock, type RunId } from '../acm/ids.js';
import { AciaError, errorMessage, isAciaError } from '../errors.js';
import { parseLedgerEntry, type LedgerEntry } from './entry.js';
import { checkEntryShape } from './entry-shape.js';
import { lineHashMatches } from './hash.js';
import { parseLineJson } from './line-reader.js';
import { retryTransient } from './pg-retry.js';
import { SealedChain } from './seal.js';
import type { AppendInput, RunLedger } from './types.js';
import { assertFence, checkFence, LEASE_SCHEMA, type LedgerFence } from './pg-lease.js';

/**
 * The channel every committed ledger row is announced on. The notification names no run: any role may
 * LISTEN, and a submitter must not learn other submitters' run ids (fleet/tenancy.ts).
 */
export const LEDGER_CHANNEL = 'acia_ledger';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS acia_ledger (
  run_id text NOT NULL,
  seq integer NOT NULL,
  hash text NOT NULL,
  -- The sealed line as the file ledger writes it, verbatim: jsonb would normalise what was hashed.
  line text NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS acia_blobs (
  run_id text NOT NULL,
  ref text NOT NULL,
  content bytea NOT NULL,
  PRIMARY KEY (run_id, ref)
);
-- Which lease epoch wrote each row (null: an unfenced writer); not part of the hashed line.
ALTER TABLE acia_ledger ADD COLUMN IF NOT EXISTS epoch bigint;
-- Every committed entry is announced on a channel, whoever wrote it, without its run id (any role can
-- listen): acia ui follows runs live without reading their rows again. A transaction's identical
-- notifications are sent once.
CREATE OR REPLACE FUNCTION acia_ledger_notify() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_notify('${LEDGER_CHANNEL}', '');
  RETURN NULL;
END
$fn$;
CREATE OR REPLACE TRIGGER acia_ledger_notify AFTER INSERT ON acia_ledger FOR EACH ROW EXECUTE FUNCTION acia_ledger_notify();
${LEASE_SCHEMA}
-- A fenced append in one statement (one round trip, its own transaction): the run's lease row locked,
-- the writer's epoch and task token checked, and the entry inserted only when it was sealed on the true
-- tail; a writer that is behind gets the rows it has not seen instead, and seals again on them.
CREATE OR REPLACE FUNCTION acia_append_fenced(p_run text, p_epoch bigint, p_task text, p_token bigint, p_after integer, p_seq integer, p_hash text, p_line text)
RETURNS TABLE (out_outcome text, out_current bigint, out_seq integer, out_hash text, out_line text) LANGUAGE plpgsql AS $fn$
DECLARE
  cur bigint;
BEGIN
  SELECT l.epoch INTO cur FROM acia_leases l WHERE l.run_id = p_run AND l.scope = '' FOR UPDATE;
  IF cur IS DISTINCT FROM p_epoch THEN
    RETURN QUERY SELECT 'epoch'::text, cur, NULL::integer, NULL::text, NULL::text;
    RETURN;
  END IF;
  IF p_task IS NOT NULL THEN
    SELECT l.epoch INTO cur FROM acia_leases l WHERE l.run_id = p_run AND l.scope = p_task;
    IF cur IS DISTINCT FROM p_token THEN
      RETURN QUERY SELECT 'task'::text, cur, NULL::integer, NULL::text, NULL::text;
      RETURN;
    END IF;
  END IF;
  RETURN QUERY SELECT 'behind'::text, NULL::bigint, g.seq, g.hash, g.line FROM acia_ledger g WHERE g.run_id = p_run AND g.seq > p_after ORDER BY g.seq;
  IF FOUND THEN
    RETURN;
  END IF;
  INSERT INTO acia_ledger (run_id, seq, hash, line, epoch) VALUES (p_run, p_seq, p_hash, p_line, p_epoch);
  RETURN QUERY SELECT 'ok'::text, NULL::bigint, NULL::integer, NULL::text, NULL::text;
END
$fn$;
`;

/** Creates the ledger tables when missing (idempotent; safe to run from every worker). */
export async function migrateLedger(db: Pool | PoolClient): Promise<void> {
  // Two workers starting at once may race on CREATE TABLE IF NOT EXISTS: serialise on an advisory lock.
  await retryTransient(() => db.query(`SELECT pg_advisory_lock(472104); ${SCHEMA} SELECT pg_advisory_unlock(472104);`));
}

export interface OpenPgLedgerOptions {
  clock: Clock;
  create: boolean;
  /** The run's local directory (manifest, wiki) on this worker. */
  dir: string;
  /** The lease this writer holds; absent, appends rely on the (run, seq) key alone. */
  fence?: LedgerFence;
  /**
   * Blobs the opener will read at once (a task job: the context packet, the roles), named from the entries:
   * fetched in one query beside the fence check, then served by getBlob. Blobs are content-addressed, so a
   * copy held here is never stale.
   */
  blobsFor?: (entries: readonly LedgerEntry[]) => string[];
}

export async function openPgLedger(db: Pool, runId: string, o: OpenPgLedgerOptions): Promise<RunLedger> {
  const id = asRunId(runId);
  const rows = await retryTransient(() => db.query<{ line: string; hash: string }>('SELECT line, hash FROM acia_ledger WHERE run_id = $1 ORDER BY seq', [id]));
  if (rows.rowCount === 0 && !o.create) throw new AciaError('RUN_NOT_FOUND', `run ${runId} not found in the database`);
  const entries: LedgerEntry[] = [];
  extendChain(id, entries, rows.rows);
  // A writer whose lease is already gone (a task job taken after its orchestrator lost the run) stops
  // here, before any agent works for it.
  const refs = o.blobsFor?.(entries) ?? [];
  const [blobs] = await Promise.all([
    refs.length === 0 ? null : retryTransient(() => db.query<{ ref: string; content: Buffer }>('SELECT ref, content FROM acia_blobs WHERE run_id = $1 AND ref = ANY($2)', [id, refs])),
    o.fence ? checkFence(db, id, o.fence, false) : null,
  ]);
  const ledger = new PgRunLedger(db, id, o.dir, o.clock, entries, o.fence ?? null);
  for (const b of blobs?.rows ?? []) ledger.held.set(b.ref, b.content);
  return ledger;
}

/** Appends rows read from the database to `entries`, checking each links to the one before it. */
function extendChain(runId: RunId, entries: LedgerEntry[], rows: readonly { line: string; hash: string }[]): void {
  for (const r of rows) {
    const where = `run ${runId} in the database`;
    const shape = checkEntryShape(parseLineJson(r.line, where));
    const e = shape.ok ? shape.entry : null;
    const prev = entries.at(-1);
    // A row someone edited in the database breaks the chain here, before anything is appended to it.
    if (!e || e.seq !== (prev ? prev.seq + 1 : 0) || e.hash !== r.hash || !lineHashMatches(r.line, e) || (prev && e.prevHash !== prev.hash)) {
      throw new AciaError('LEDGER_CORRUPT', `run ${runId}: the ledger in the database is broken at seq ${e?.seq ?? entries.length}`, { hint: `check it: acia verify ${runId} --db <url>` });
    }
    entries.push(parseLedgerEntry(e, where));
  }
}

/** Reads a fleet run's entries and the blobs they name (export, verify, show). */
export async function readPgRun(db: Pool, runId: string): Promise<{ lines: string[]; blobs: Map<string, Buffer> }> {
  const rows = await db.query<{ line: string }>('SELECT line FROM acia_ledger WHERE run_id = $1 ORDER BY seq', [runId]);
  if (rows.rowCount === 0) throw new AciaError('RUN_NOT_FOUND', `run ${runId} not found in the database`);
  const blobs = await db.query<{ ref: string; content: Buffer }>('SELECT ref, content FROM acia_blobs WHERE run_id = $1', [runId]);
  return { lines: rows.rows.map((r) => r.line), blobs: new Map(blobs.rows.map((b) => [b.ref, b.content])) };
}

class PgRunLedger extends SealedChain implements RunLedger {
  private chain: Promise<unknown> = Promise.resolve();
  private failure: AciaError | null = null;
  /** Blobs read with the entries (OpenPgLedgerOptions.blobsFor). */
  readonly held = new Map<string, Buffer>();

  constructor(
    private readonly db: Pool,
    runId: RunId,
    readonly dir: string,
    clock: Clock,
    list: LedgerEntry[],
    private readonly fence: LedgerFence | null,
  ) {
    super(runId, clock, list);
  }

  append(input: AppendInput): Promise<LedgerEntry> {
    const next = this.chain.then(async () => {
      if (this.failure) throw this.failure;
      return this.fence ? this.appendFenced(this.fence, input) : this.appendUnfenced(input);
    });
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Reads the entries other writers appended since this writer's tail (a task worker's, the orchestrator's). */
  refresh(): Promise<void> {
    const next = this.chain.then(async () => {
      if (this.failure) throw this.failure;
      await retryTransient(() => this.catchUp());
    });
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async catchUp(): Promise<void> {
    const rows = await this.db.query<{ line: string; hash: string }>('SELECT line, hash FROM acia_ledger WHERE run_id = $1 AND seq > $2 ORDER BY seq', [this.runId, this.list.at(-1)?.seq ?? -1]);
    extendChain(this.runId, this.list, rows.rows);
  }

  private async appendUnfenced(input: AppendInput): Promise<LedgerEntry> {
    const { entry, line } = this.seal(input);
    try {
      // A restart of the server is waited out; a retried insert that finds its seq taken checks whether
      // the row is its own (the first attempt committed, its answer was lost) before calling it a rival.
      await retryTransient(async (attempt) => {
        try {
          await this.db.query('INSERT INTO acia_ledger (run_id, seq, hash, line) VALUES ($1, $2, $3, $4)', [this.runId, entry.seq, entry.hash, line.trimEnd()]);
        } catch (e) {
          if (attempt > 0 && (e as { code?: string }).code === '23505' && (await this.holds(entry))) return;
          throw e;
        }
      });
    } catch (e) {
      // 23505: that seq exists. Another writer got there first: stop writing.
      this.failure =
        (e as { code?: string }).code === '23505'
          ? new AciaError('LEDGER_LOCKED', `run ${this.runId}: seq ${entry.seq} was written by another worker; this worker's writes are refused`)
          : new AciaError('LEDGER_IO', `run ${this.runId}: cannot append to the database ledger: ${errorMessage(e)}`, { cause: e });
      throw this.failure;
    }
    this.list.push(entry);
    return entry;
  }

  private async holds(entry: LedgerEntry): Promise<boolean> {
    const r = await this.db.query<{ hash: string }>('SELECT hash FROM acia_ledger WHERE run_id = $1 AND seq = $2', [this.runId, entry.seq]);
    return r.rows[0]?.hash === entry.hash;
  }

  /**
   * One statement (acia_append_fenced, created with the schema): it locks the lease row, checks the epoch
   * and the task token, and inserts the entry sealed on this writer's tail, or hands back what other
   * writers of the same epoch appended since, on which the entry is sealed again. A server restart is
   * waited out by calling again; when an earlier call's insert committed but its answer was lost, the
   * rows handed back hold that very entry (same hash), which is adopted instead of appended twice.
   * Fencing is never retried.
   */
  private async appendFenced(fence: LedgerFence, input: AppendInput): Promise<LedgerEntry> {
    // Every entry this append has sent: any of them may have committed.
    const sent = new Set<string>();
    try {
      return await retryTransient(async () => {
        for (;;) {
          const { entry, line } = this.seal(input);
          sent.add(entry.hash);
          const r = await this.db.query<{ out_outcome: string; out_current: string | null; out_seq: number; out_hash: string; out_line: string }>(
            'SELECT out_outcome, out_current, out_seq, out_hash, out_line FROM acia_append_fenced($1, $2, $3, $4, $5, $6, $7, $8)',
            [this.runId, fence.epoch, fence.task?.taskId ?? null, fence.task?.token ?? null, this.list.at(-1)?.seq ?? -1, entry.seq, entry.hash, line.trimEnd()],
          );
          const first = r.rows[0];
          if (first?.out_outcome === 'ok') {
            this.list.push(entry);
            return entry;
          }
          if (first?.out_outcome === 'epoch') assertFence(this.runId, fence, first.out_current, null);
          if (first?.out_outcome === 'task') assertFence(this.runId, fence, fence.epoch, first.out_current);
          if (first?.out_outcome !== 'behind') throw new AciaError('LEDGER_IO', `run ${this.runId}: the database's fenced append answered ${JSON.stringify(first?.out_outcome ?? null)}`);
          // Behind: what the others appended joins the chain, and the entry is sealed again on it.
          const before = this.list.length;
          extendChain(this.runId, this.list, r.rows.map((row) => ({ line: row.out_line, hash: row.out_hash })));
          const mine = this.list.slice(before).find((e) => sent.has(e.hash));
          if (mine) return mine;
        }
      });
    } catch (e) {
      this.failure = isAciaError(e) && (e.code === 'LEDGER_FENCED' || e.code === 'LEDGER_CORRUPT') ? e : new AciaError('LEDGER_IO', `run ${this.runId}: cannot append to the database ledger: ${errorMessage(e)}`, { cause: e });
      throw this.failure;
    }
  }

  async putBlob(content: string | Uint8Array): Promise<string> {
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content);
    const ref = `sha256:${sha256Hex(bytes)}`;
    await retryTransient(() => this.db.query('INSERT INTO acia_blobs (run_id, ref, content) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [this.runId, ref, bytes]));
    return ref;
  }

  async getBlob(ref: string): Promise<Buffer> {
    const held = this.held.get(ref);
    if (held !== undefined) return held;
    const r = await retryTransient(() => this.db.query<{ content: Buffer }>('SELECT content FROM acia_blobs WHERE run_id = $1 AND ref = $2', [this.runId, ref]));
    const row = r.rows[0];
    if (!row) throw new AciaError('BLOB_MISSING', `run ${this.runId}: no blob ${ref} in the database`);
    return row.content;
  }

  async close(): Promise<void> {
    await this.chain;
  }
}
