// Fencing tokens for fleet runs. A run's lease has an epoch that goes up by one every time a worker
// takes the run; a task attempt handed to another worker has its own token the same way. Every
// PgLedger append and every push checks the writer's epoch (and token) against these rows, so a worker
// that was cut off while its lease expired cannot add to the chain or move a branch once another
// worker has taken over, however late its writes arrive.
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { AciaError } from '../errors.js';
import { retryTransient } from './pg-retry.js';

/**
 * A query on the pool waits out a database restart (a lease taken twice only skips an epoch nobody
 * holds); inside a caller's transaction (a checked-out client) it does not: the caller retries the whole
 * transaction.
 */
function leaseQuery<R extends QueryResultRow>(db: Pool | PoolClient, sql: string, params: unknown[]) {
  return 'release' in db ? db.query<R>(sql, params) : retryTransient(() => db.query<R>(sql, params));
}

/** Scope '' is the run's lease (its orchestrator); any other scope is a task id. */
export const LEASE_SCHEMA = `
CREATE TABLE IF NOT EXISTS acia_leases (
  run_id text NOT NULL,
  scope text NOT NULL,
  epoch bigint NOT NULL,
  holder text,
  taken_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, scope)
);
`;

export interface LedgerFence {
  /** The run's lease epoch this writer acts for (a task worker carries its orchestrator's). */
  epoch: number;
  /** A task worker's own attempt token: re-dispatching the task moves it on. */
  task?: { taskId: string; token: number };
}

/**
 * Takes the lease of a run (scope '') or of one of its tasks: the epoch goes up by one, atomically.
 * `onTakeover` hears of a lease another holder had (a takeover, which workers log and count).
 */
export async function takeLease(db: Pool | PoolClient, runId: string, scope: string, holder: string, onTakeover?: (previous: string, epoch: number) => void): Promise<number> {
  const r = await leaseQuery<{ epoch: string; previous: string | null }>(
    db,
    `WITH old AS (SELECT holder FROM acia_leases WHERE run_id = $1 AND scope = $2)
     INSERT INTO acia_leases (run_id, scope, epoch, holder) VALUES ($1, $2, 1, $3)
     ON CONFLICT (run_id, scope) DO UPDATE SET epoch = acia_leases.epoch + 1, holder = $3, taken_at = now()
     RETURNING epoch, (SELECT holder FROM old) AS previous`,
    [runId, scope, holder],
  );
  const row = r.rows[0]!;
  const epoch = Number(row.epoch);
  if (row.previous !== null && row.previous !== holder) onTakeover?.(row.previous, epoch);
  return epoch;
}

export function fencedError(runId: string, what: string): AciaError {
  return new AciaError('LEDGER_FENCED', `run ${runId}: ${what}; this worker's writes are refused and it drops the run`, {
    hint: 'another worker took the run over after this one stopped answering; nothing of this worker is merged into the chain',
  });
}

/**
 * Throws LEDGER_FENCED unless `fence` is still current. With `lock`, inside a transaction, the run's
 * lease row stays locked until it ends, so no takeover can slip between this check and the insert.
 */
export async function checkFence(db: Pool | PoolClient, runId: string, fence: LedgerFence, lock: boolean): Promise<void> {
  const run = await leaseQuery<{ epoch: string }>(db, `SELECT epoch FROM acia_leases WHERE run_id = $1 AND scope = '' ${lock ? 'FOR UPDATE' : ''}`, [runId]);
  const task = fence.task ? await leaseQuery<{ epoch: string }>(db, 'SELECT epoch FROM acia_leases WHERE run_id = $1 AND scope = $2', [runId, fence.task.taskId]) : null;
  assertFence(runId, fence, run.rows[0]?.epoch ?? null, task?.rows[0]?.epoch ?? null);
}

/**
 * Throws LEDGER_FENCED unless the run's lease epoch and the task's token, as the database holds them now
 * (null or absent: no such lease), are `fence`'s. For a statement that read them beside its own work.
 */
export function assertFence(runId: string, fence: LedgerFence, epoch: string | number | null, token: string | number | null): void {
  const now = epoch === null ? null : Number(epoch);
  if (now !== fence.epoch) throw fencedError(runId, `its lease epoch ${fence.epoch} is no longer current (now ${now ?? 'none'})`);
  if (!fence.task) return;
  const held = token === null ? null : Number(token);
  if (held !== fence.task.token) throw fencedError(runId, `task ${fence.task.taskId} was handed to another worker (token ${fence.task.token}, now ${held ?? 'none'})`);
}
