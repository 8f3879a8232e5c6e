// Riding out a PostgreSQL restart. A fleet run's ledger, status and queue live in the database; when
// the server goes away for a few seconds (a restart, a failover) the worker's queries fail with
// connection errors, and they must wait and try again rather than fail the run. Anything else (a
// constraint, a syntax error, a refused login) is not retried: it would fail the same way again.
import type { Pool, PoolClient } from 'pg';

/** How long a fleet operation waits for the database to come back before it fails (ms), by default. */
export const DB_OUTAGE_TOLERANCE_MS = 60_000;
// Process-wide: `acia worker --db-patience` sets it once at start-up for every query of that worker.
let tolerance = DB_OUTAGE_TOLERANCE_MS;

export function setDbOutageTolerance(ms: number): void {
  tolerance = ms;
}

/** How long this process waits for the database to come back (`acia worker --db-patience`), in ms. */
export function dbOutageToleranceMs(): number {
  return tolerance;
}

// SQLSTATE classes and codes that mean "the server or the connection went away", not "your query is wrong".
const TRANSIENT_SQLSTATE = new Set(['57P01', '57P02', '57P03', '53300', '40001', '40P01']);
const TRANSIENT_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
// node-postgres reports a dropped socket with these messages and no code.
const TRANSIENT_MESSAGE = /connection terminated|connection timeout|connection error|terminating connection|server closed the connection|not queryable/i;

// Process-wide, like the tolerance: how many transient errors this process rode out (a worker's
// metrics and its row in acia_workers report it).
let transientSeen = 0;

/** Transient database errors this process has waited out (or given up on) so far. */
export function transientDbErrors(): number {
  return transientSeen;
}

/** Counts one transient error that a caller handled itself (a heartbeat, a poll) rather than through retryTransient. */
export function noteTransientDbError(): void {
  transientSeen++;
}

export function isTransientDbError(e: unknown): boolean {
  if (typeof e !== 'object' || e === null) return false;
  const { code, message } = e as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (code.startsWith('08') || TRANSIENT_SQLSTATE.has(code) || TRANSIENT_ERRNO.has(code)) return true;
    // A SQLSTATE we know is a real answer from the server: not transient.
    if (/^[0-9A-Z]{5}$/.test(code)) return false;
  }
  return typeof message === 'string' && TRANSIENT_MESSAGE.test(message);
}

export interface RetryOptions {
  toleranceMs?: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

/**
 * Runs `op` (given the attempt number, 0 first) until it succeeds, retrying transient database errors
 * with backoff (0.2 s doubling to 2 s) for up to `toleranceMs`; the last error is thrown after that,
 * and a non-transient error at once. `op` must be safe to repeat: a statement whose commit reached the
 * server but whose answer was lost runs again (the ledger's append checks for its own row).
 */
export async function retryTransient<T>(op: (attempt: number) => Promise<T>, o: RetryOptions = {}): Promise<T> {
  const now = o.now ?? Date.now;
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const deadline = now() + (o.toleranceMs ?? tolerance);
  for (let attempt = 0; ; attempt++) {
    try {
      return await op(attempt);
    } catch (e) {
      if (!isTransientDbError(e)) throw e;
      transientSeen++;
      if (now() >= deadline) throw e;
      await sleep(Math.min(2_000, 200 * 2 ** Math.min(attempt, 4)));
    }
  }
}

/**
 * A pooled client for a transaction or a lock. The pool listens for errors only on idle clients; a
 * checked-out client whose server goes away between two queries emits `error` with nobody listening,
 * which kills the process (and every run a worker holds). Here that error is swallowed for the checkout:
 * the client's next query fails, and its caller rolls back and releases it destroyed, as for any failure.
 */
export async function connectGuarded(db: Pool): Promise<PoolClient> {
  const client = await db.connect();
  const swallow = (): void => undefined;
  client.on('error', swallow);
  const release = client.release.bind(client);
  client.release = (err?: Error | boolean) => {
    client.off('error', swallow);
    release(err);
  };
  return client;
}
