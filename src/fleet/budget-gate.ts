// A fleet run's cost and token budget, shared by every worker process in the database: one row per run
// (limits and what its recorded calls cost) and one row per call in flight (its estimate, held until the
// call ends). A reservation is taken in one transaction that locks the run's row (SELECT ... FOR UPDATE),
// so N workers reserving at once are serialised and cannot pass the limit together.
import { connectGuarded, retryTransient } from '../core/ledger/pg-retry.js';
import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { AciaError, errorMessage } from '../core/errors.js';
import type { BudgetAmount, BudgetGate, BudgetLimits, BudgetReservation, ReserveOutcome } from '../team/budget.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS acia_budgets (
  run_id text PRIMARY KEY,
  max_cost_usd double precision,
  max_tokens bigint,
  spent_usd double precision NOT NULL DEFAULT 0,
  spent_tokens bigint NOT NULL DEFAULT 0,
  -- false once a call of a model with no known price was counted: its cost is not in spent_usd.
  cost_known boolean NOT NULL DEFAULT true,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS acia_budget_reservations (
  id text PRIMARY KEY,
  run_id text NOT NULL REFERENCES acia_budgets (run_id) ON DELETE CASCADE,
  worker text NOT NULL,
  usd double precision NOT NULL,
  tokens bigint NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS acia_budget_reservations_run ON acia_budget_reservations (run_id);
-- A reservation in one statement (one round trip, its own transaction): the run's row locked (made, with no
-- limits, for a gate driven directly), expired reservations dropped, and the estimate held only when the
-- limits allow it (p_enforce) with every call in flight counted. A reservation already there (a retry
-- whose first call committed, its answer lost) is kept as it is. out_breach names the limit it would pass.
CREATE OR REPLACE FUNCTION acia_budget_reserve(p_run text, p_id text, p_worker text, p_usd double precision, p_tokens bigint, p_ttl double precision, p_enforce boolean)
RETURNS TABLE (out_breach text, out_max_cost_usd double precision, out_max_tokens bigint, out_spent_usd double precision, out_spent_tokens bigint, out_held_usd double precision, out_held_tokens numeric)
LANGUAGE plpgsql AS $fn$
DECLARE
  b acia_budgets%ROWTYPE;
  h_usd double precision;
  h_tokens numeric;
BEGIN
  SELECT * INTO b FROM acia_budgets WHERE run_id = p_run FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO acia_budgets (run_id) VALUES (p_run) ON CONFLICT DO NOTHING;
    SELECT * INTO b FROM acia_budgets WHERE run_id = p_run FOR UPDATE;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM acia_budget_reservations r WHERE r.id = p_id) THEN
    DELETE FROM acia_budget_reservations r WHERE r.run_id = p_run AND r.expires_at < now();
    SELECT coalesce(sum(r.usd), 0), coalesce(sum(r.tokens), 0) INTO h_usd, h_tokens FROM acia_budget_reservations r WHERE r.run_id = p_run;
    IF p_enforce AND b.max_tokens IS NOT NULL AND b.spent_tokens + h_tokens + p_tokens > b.max_tokens THEN
      out_breach := 'tokens';
    ELSIF p_enforce AND b.max_cost_usd IS NOT NULL AND p_usd IS NOT NULL AND b.spent_usd + h_usd + p_usd > b.max_cost_usd THEN
      out_breach := 'cost';
    ELSE
      INSERT INTO acia_budget_reservations (id, run_id, worker, usd, tokens, expires_at) VALUES (p_id, p_run, p_worker, coalesce(p_usd, 0), p_tokens, now() + make_interval(secs => p_ttl));
    END IF;
  END IF;
  RETURN QUERY SELECT out_breach, b.max_cost_usd, b.max_tokens, b.spent_usd, b.spent_tokens, h_usd, h_tokens;
END
$fn$;
-- A settlement in one statement, in reserve's lock order (the run's row, then its reservations): the
-- reservation replaced by what the call cost. A retry (p_retry) that finds its reservation gone counts
-- nothing: its first call committed, only the answer was lost.
CREATE OR REPLACE FUNCTION acia_budget_settle(p_run text, p_id text, p_usd double precision, p_tokens bigint, p_known boolean, p_retry boolean)
RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
  n integer;
BEGIN
  PERFORM 1 FROM acia_budgets WHERE run_id = p_run FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO acia_budgets (run_id) VALUES (p_run) ON CONFLICT DO NOTHING;
    PERFORM 1 FROM acia_budgets WHERE run_id = p_run FOR UPDATE;
  END IF;
  DELETE FROM acia_budget_reservations WHERE id = p_id;
  GET DIAGNOSTICS n = ROW_COUNT;
  IF p_retry AND n = 0 THEN
    RETURN;
  END IF;
  UPDATE acia_budgets SET spent_usd = spent_usd + p_usd, spent_tokens = spent_tokens + p_tokens, cost_known = cost_known AND p_known, updated_at = now() WHERE run_id = p_run;
END
$fn$;
`;

/**
 * How long a reservation outlives its worker's silence. Longer than any one model call (a long streamed
 * reply takes minutes); a worker that died mid-call holds its estimate at most this long, and a takeover
 * drops the reservations of workers whose heartbeat stopped at once.
 */
export const RESERVATION_TTL_SECONDS = 15 * 60;

export async function migrateBudgets(db: Pool | PoolClient): Promise<void> {
  // Workers starting together race on CREATE TABLE IF NOT EXISTS: serialised on an advisory lock.
  await db.query(`SELECT pg_advisory_lock(472106); ${SCHEMA} SELECT pg_advisory_unlock(472106);`);
}

export interface RunBudget {
  limits: { maxCostUsd: number | null; maxTokens: number | null };
  spent: { usd: number; tokens: number; costKnown: boolean };
  reserved: { usd: number; tokens: number; count: number };
}

/** A run's budget as the database holds it now (one statement: one snapshot), or null when no worker opened it yet. */
export async function readRunBudget(db: Pool | PoolClient, runId: string): Promise<RunBudget | null> {
  const row = (
    await db.query<BudgetRow & HeldRow>(
      `SELECT b.max_cost_usd, b.max_tokens, b.spent_usd, b.spent_tokens, b.cost_known,
              coalesce(sum(r.usd), 0) AS usd, coalesce(sum(r.tokens), 0) AS tokens, count(r.id) AS n
         FROM acia_budgets b LEFT JOIN acia_budget_reservations r ON r.run_id = b.run_id
        WHERE b.run_id = $1 GROUP BY b.run_id`,
      [runId],
    )
  ).rows[0];
  if (!row) return null;
  return {
    limits: { maxCostUsd: row.max_cost_usd, maxTokens: row.max_tokens === null ? null : Number(row.max_tokens) },
    spent: { usd: row.spent_usd, tokens: Number(row.spent_tokens), costKnown: row.cost_known },
    reserved: { usd: Number(row.usd), tokens: Number(row.tokens), count: Number(row.n) },
  };
}

/**
 * Opens a run's shared budget for a worker that takes (or takes over) the run: the limits are the run's
 * settings, the spend is re-derived from the run's LLM_CALL entries (the ledger is the truth, whatever
 * a worker that died had settled or not), and reservations of workers whose heartbeat stopped are
 * dropped. Returns the gate this worker reserves through.
 */
export async function openRunBudget(db: Pool, runId: string, limits: BudgetLimits, o: { worker: string; ttlSeconds?: number }): Promise<PgBudgetGate> {
  await retryTransient(() => migrateBudgets(db));
  const spend = await retryTransient(() => ledgerSpend(db, runId));
  const open = async (c: PoolClient): Promise<void> => {
    await c.query(
      `INSERT INTO acia_budgets (run_id, max_cost_usd, max_tokens) VALUES ($1, $2, $3)
       ON CONFLICT (run_id) DO UPDATE SET max_cost_usd = $2, max_tokens = $3`,
      [runId, limits.maxCostUsd ?? null, limits.maxTokens ?? null],
    );
    await c.query('SELECT 1 FROM acia_budgets WHERE run_id = $1 FOR UPDATE', [runId]);
    await c.query('UPDATE acia_budgets SET spent_usd = $2, spent_tokens = $3, cost_known = $4, updated_at = now() WHERE run_id = $1', [runId, spend.usd, spend.tokens, spend.costKnown]);
    // Only the fleet's heartbeat table knows who is dead; a database without it (a bare gate) relies on expiry.
    const workers = (await c.query<{ t: string | null }>("SELECT to_regclass('acia_workers')::text AS t")).rows[0]?.t;
    if (workers) {
      await c.query(
        `DELETE FROM acia_budget_reservations r WHERE r.run_id = $1 AND r.worker <> $2 AND NOT EXISTS
           (SELECT 1 FROM acia_workers w WHERE w.name = r.worker AND NOT w.stopped AND w.seen_at > now() - make_interval(secs => $3))`,
        [runId, o.worker, DEAD_AFTER_SECONDS],
      );
    }
  };
  // Idempotent (the spend and the limits are set, not added): safe to run again after a lost answer.
  await retryTransient(() => transaction(db, open));
  return new PgBudgetGate(db, o);
}

/** A worker whose heartbeat is this old is dead to the budget (the fleet's lease is 10 s). */
const DEAD_AFTER_SECONDS = 10;

/** What a run's recorded model calls cost, from its ledger rows. */
export async function ledgerSpend(db: Pool | PoolClient, runId: string): Promise<{ usd: number; tokens: number; costKnown: boolean }> {
  // The filter is only a pre-selection: each candidate line is parsed and its type checked.
  const rows = await db.query<{ line: string }>(`SELECT line FROM acia_ledger WHERE run_id = $1 AND line LIKE '%"LLM\\_CALL"%' ORDER BY seq`, [runId]);
  const spend = { usd: 0, tokens: 0, costKnown: true };
  for (const r of rows.rows) {
    const e = JSON.parse(r.line) as { type?: string; data?: { costUsd?: number | null; usage?: Record<string, number> } };
    if (e.type !== 'LLM_CALL' || !e.data) continue;
    const u = e.data.usage ?? {};
    spend.tokens += (u.inputTokens ?? 0) + (u.outputTokens ?? 0) + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0);
    if (typeof e.data.costUsd === 'number') spend.usd += e.data.costUsd;
    else spend.costKnown = false;
  }
  return spend;
}

interface BudgetRow {
  max_cost_usd: number | null;
  max_tokens: string | null;
  spent_usd: number;
  spent_tokens: string;
  cost_known: boolean;
}
/** What acia_budget_reserve answers: the run's row and what is held, and the limit the estimate would pass (null: reserved). */
interface ReserveRow {
  out_breach: 'tokens' | 'cost' | null;
  out_max_cost_usd: number | null;
  out_max_tokens: string | null;
  out_spent_usd: number;
  out_spent_tokens: string;
  out_held_usd: number | null;
  out_held_tokens: string | null;
}
interface HeldRow {
  usd: string | number;
  tokens: string | number;
  n: string | number;
}

/** Runs `op` (given its attempt number) again while the database is away; see `retryTransient`. */
export type DbRetry = <T>(op: (attempt: number) => Promise<T>) => Promise<T>;

/** The gate one worker process reserves through (each worker has its own pool, like separate machines). */
export class PgBudgetGate implements BudgetGate {
  private readonly ttl: number;
  private readonly retry: DbRetry;
  readonly worker: string;

  constructor(
    private readonly db: Pool,
    o: { worker: string; ttlSeconds?: number; retry?: DbRetry },
  ) {
    this.worker = o.worker;
    this.ttl = o.ttlSeconds ?? RESERVATION_TTL_SECONDS;
    this.retry = o.retry ?? retryTransient;
  }

  async reserve(runId: string, estimate: BudgetAmount, o: { enforce: boolean }): Promise<ReserveOutcome> {
    // The id is chosen once: a retry after a commit whose answer was lost finds its own row, not a rival.
    const reservation: BudgetReservation = { id: randomUUID(), runId, amount: { usd: estimate.usd, tokens: estimate.tokens } };
    // One statement (acia_budget_reserve, created with the schema): the run's row is locked while the
    // reservations in flight are counted and this one inserted, so reservations at once are serialised.
    const r = await this.run(() =>
      this.db.query<ReserveRow>('SELECT * FROM acia_budget_reserve($1, $2, $3, $4, $5, $6, $7)', [runId, reservation.id, this.worker, estimate.usd, estimate.tokens, this.ttl, o.enforce]),
    );
    const row = r.rows[0]!;
    if (row.out_breach === null) return { reservation };
    const held = { usd: Number(row.out_held_usd), tokens: Number(row.out_held_tokens) };
    const inFlight = (n: number) => (n > 0 ? { inFlight: n } : {});
    if (row.out_breach === 'tokens') {
      return { breach: { limit: 'tokens', spent: Number(row.out_spent_tokens) + held.tokens + estimate.tokens, max: Number(row.out_max_tokens), ...inFlight(held.tokens) } };
    }
    // An unknown price cannot be checked (as locally); the pricing table warns about such models.
    return { breach: { limit: 'cost', spent: row.out_spent_usd + held.usd + (estimate.usd ?? 0), max: row.out_max_cost_usd!, ...inFlight(held.usd) } };
  }

  /** Replaces the reservation by what the call cost; counted even if the reservation had expired meanwhile. */
  async settle(reservation: BudgetReservation, actual: BudgetAmount): Promise<void> {
    // Usage comes from the model's endpoint: a negative or non-numeric count must not buy budget back,
    // so it is charged at what was reserved for it.
    const sane = (n: number | null, held: number | null) => (n === null || (Number.isFinite(n) && n >= 0) ? n : (held ?? 0));
    const usd = sane(actual.usd, reservation.amount.usd);
    const tokens = Math.ceil(sane(actual.tokens, reservation.amount.tokens) ?? 0);
    // One statement (acia_budget_settle): the run's row locked, the reservation deleted, the cost added.
    await this.run((attempt) => this.db.query('SELECT acia_budget_settle($1, $2, $3, $4, $5, $6)', [reservation.runId, reservation.id, usd ?? 0, tokens, usd !== null, attempt > 0]));
  }

  async release(reservation: BudgetReservation): Promise<void> {
    await this.run(() => this.db.query('DELETE FROM acia_budget_reservations WHERE id = $1', [reservation.id]));
  }

  private async run<T>(op: (attempt: number) => Promise<T>): Promise<T> {
    try {
      return await this.retry(op);
    } catch (e) {
      throw e instanceof AciaError ? e : new AciaError('LEDGER_IO', `the fleet's budget in the database: ${errorMessage(e)}`, { cause: e });
    }
  }
}

async function transaction<T>(db: Pool, body: (c: PoolClient) => Promise<T>): Promise<T> {
  const c = await connectGuarded(db);
  let failed = false;
  try {
    await c.query('BEGIN');
    const r = await body(c);
    await c.query('COMMIT');
    return r;
  } catch (e) {
    failed = true;
    await c.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    // A client whose transaction failed may have lost its server: discarded, not returned to the pool.
    c.release(failed);
  }
}
