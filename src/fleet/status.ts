// `acia fleet status`: the fleet at a glance, read in a few queries: the database's own health, the
// workers (alive, stale, gone, stopped), the runs by status and who holds which, the task jobs in
// pg-boss (queued, active, retrying, failed, expired, and those stuck on a worker that stopped
// answering) and the budgets of unfinished runs. A submitter's role sees its own runs only and has no
// rights on the queue or the budgets: those parts are null for it, and say so.
import type pg from 'pg';
import type { FleetClient } from './fleet-db.js';
import { RUN_QUEUE, TASK_QUEUE } from './fleet-db.js';
import { FORGET_AFTER_HOURS, GONE_SECONDS, LEASE_SECONDS } from './liveness.js';

export type WorkerState = 'alive' | 'stale' | 'gone' | 'stopped';

export interface WorkerStatus {
  name: string;
  /** alive: beating; stale: silent for a lease (dead or cut off; its runs get requeued); gone: silent for minutes; stopped: left gracefully. */
  state: WorkerState;
  alive: boolean;
  concurrency: number;
  lastSeenSeconds: number;
  /** Runs it orchestrates now, and task jobs it works on. */
  running: number;
  tasks: number;
  /** Transient database errors it rode out, and its last outage. */
  dbErrors: number;
  lastOutage: { at: string; seconds: number } | null;
}

export interface TaskJobCounts {
  queued: number;
  active: number;
  retrying: number;
  failed: number;
  /** Failed because they outlived their expiry while active. */
  expired: number;
  cancelled: number;
  completed: number;
  /** Active jobs whose worker stopped answering (the orchestrator hands them out again, or a worker cancels them). */
  stuck: { jobId: string; runId: string; taskId: string; worker: string | null; activeSeconds: number }[];
}

export interface BudgetStatus {
  runId: string;
  status: string;
  maxCostUsd: number | null;
  spentUsd: number;
  reservedUsd: number;
  maxTokens: number | null;
  spentTokens: number;
  reservedTokens: number;
  callsInFlight: number;
}

export interface DatabaseStatus {
  /** Round trip of one trivial query, ms. */
  latencyMs: number;
  version: string;
  sizeBytes: number | null;
  connections: number;
  maxConnections: number;
  startedAt: string;
  /** The role this session uses, and whether it owns the fleet's tables (sees everything). */
  role: string;
  owner: boolean;
}

export interface FleetStatus {
  database: DatabaseStatus;
  workers: WorkerStatus[];
  /** Gone and stopped workers are forgotten this many hours after their last heartbeat. */
  forgetAfterHours: number;
  /** Runs waiting for a worker (the queue's depth for the owner; a submitter's own queued runs otherwise). */
  queued: number;
  leases: { runId: string; worker: string; since: string | null; heldSeconds: number | null }[];
  /** Runs by status. */
  runs: Record<string, number>;
  /** Null for a role without rights on the queue. */
  taskJobs: TaskJobCounts | null;
  /** Unfinished runs' budgets; null for a role without rights on them. */
  budgets: BudgetStatus[] | null;
}

export async function readFleetStatus(fleet: FleetClient): Promise<FleetStatus> {
  const db = fleet.db;
  const database = await databaseStatus(db, fleet.boss !== null);
  const workers = (
    await db.query<{ name: string; concurrency: number; seen_s: number; stopped: boolean; runs: string; tasks: string; db_errors: string; outage_at: Date | null; outage_ms: number | null }>(
      `SELECT w.name, w.concurrency, EXTRACT(EPOCH FROM now() - w.seen_at)::float AS seen_s, w.stopped, w.db_errors,
              w.last_outage_at AS outage_at, w.last_outage_ms AS outage_ms,
              (SELECT count(*) FROM acia_runs r WHERE r.worker = w.name AND r.status = 'running') AS runs,
              ${fleet.boss ? `(SELECT count(*) FROM acia_task_jobs t JOIN pgboss.job j ON j.id::text = t.job_id AND j.name = '${TASK_QUEUE}' WHERE t.worker = w.name AND j.state = 'active')` : '0'} AS tasks
       FROM acia_workers w ORDER BY w.name`,
    )
  ).rows.map((w): WorkerStatus => {
    const state: WorkerState = w.stopped ? 'stopped' : w.seen_s < LEASE_SECONDS ? 'alive' : w.seen_s < GONE_SECONDS ? 'stale' : 'gone';
    return {
      name: w.name,
      state,
      alive: state === 'alive',
      concurrency: w.concurrency,
      lastSeenSeconds: Math.round(w.seen_s),
      running: Number(w.runs),
      tasks: Number(w.tasks),
      dbErrors: Number(w.db_errors),
      lastOutage: w.outage_at === null ? null : { at: w.outage_at.toISOString(), seconds: Math.round((w.outage_ms ?? 0) / 100) / 10 },
    };
  });
  const leases = (
    await db.query<{ run_id: string; worker: string; leased_at: Date | null; held_s: number | null }>(
      `SELECT run_id, worker, leased_at, EXTRACT(EPOCH FROM now() - leased_at)::float AS held_s FROM acia_runs
       WHERE status = 'running' AND worker IS NOT NULL ORDER BY leased_at NULLS LAST, run_id`,
    )
  ).rows.map((l) => ({ runId: l.run_id, worker: l.worker, since: l.leased_at?.toISOString() ?? null, heldSeconds: l.held_s === null ? null : Math.round(l.held_s) }));
  const runs = Object.fromEntries((await db.query<{ status: string; n: string }>('SELECT status, count(*) AS n FROM acia_runs GROUP BY status ORDER BY status')).rows.map((r) => [r.status, Number(r.n)]));
  // A submitter's role cannot read the queue: its own runs waiting for a worker are what it can see.
  const queued = fleet.boss ? await fleet.boss.getQueueSize(RUN_QUEUE) : (runs.queued ?? 0);
  return {
    database,
    workers,
    forgetAfterHours: FORGET_AFTER_HOURS,
    queued,
    leases,
    runs,
    taskJobs: fleet.boss ? await taskJobCounts(db) : null,
    budgets: fleet.boss ? await budgets(db) : null,
  };
}

async function databaseStatus(db: pg.Pool, owner: boolean): Promise<DatabaseStatus> {
  const t0 = performance.now();
  await db.query('SELECT 1');
  const latencyMs = Math.round((performance.now() - t0) * 10) / 10;
  const r = (
    await db.query<{ version: string; connections: string; max: string; started: Date; role: string }>(
      `SELECT current_setting('server_version') AS version, current_user AS role, pg_postmaster_start_time() AS started,
              (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()) AS connections,
              current_setting('max_connections') AS max`,
    )
  ).rows[0]!;
  // The size needs CONNECT on the database, which every role of the fleet has; anything odd is left out.
  const size = await db.query<{ size: string }>('SELECT pg_database_size(current_database()) AS size').then(
    (x) => Number(x.rows[0]?.size),
    () => null,
  );
  return { latencyMs, version: r.version, sizeBytes: size, connections: Number(r.connections), maxConnections: Number(r.max), startedAt: r.started.toISOString(), role: r.role, owner };
}

async function taskJobCounts(db: pg.Pool): Promise<TaskJobCounts> {
  const states = await db.query<{ state: string; expired: boolean; n: string }>(
    `SELECT state::text AS state, (state = 'failed' AND output->'value'->>'message' LIKE '%timeout%') AS expired, count(*) AS n
     FROM pgboss.job WHERE name = $1 GROUP BY 1, 2`,
    [TASK_QUEUE],
  );
  const counts: TaskJobCounts = { queued: 0, active: 0, retrying: 0, failed: 0, expired: 0, cancelled: 0, completed: 0, stuck: [] };
  for (const s of states.rows) {
    const n = Number(s.n);
    if (s.state === 'created') counts.queued += n;
    else if (s.state === 'retry') counts.retrying += n;
    else if (s.state === 'failed' && s.expired) counts.expired += n;
    else if (s.state === 'active' || s.state === 'failed' || s.state === 'cancelled' || s.state === 'completed') counts[s.state] += n;
  }
  const stuck = await db.query<{ id: string; run_id: string; task_id: string; worker: string | null; active_s: number }>(
    `SELECT j.id::text AS id, j.data->>'runId' AS run_id, j.data->>'taskId' AS task_id, t.worker, EXTRACT(EPOCH FROM now() - j.started_on)::float AS active_s
     FROM pgboss.job j LEFT JOIN acia_task_jobs t ON t.job_id = j.id::text LEFT JOIN acia_workers w ON w.name = t.worker
     WHERE j.name = $1 AND j.state = 'active' AND (w.name IS NULL OR w.stopped OR w.seen_at < now() - make_interval(secs => $2))
     ORDER BY j.started_on`,
    [TASK_QUEUE, LEASE_SECONDS],
  );
  counts.stuck = stuck.rows.map((s) => ({ jobId: s.id, runId: s.run_id, taskId: s.task_id, worker: s.worker, activeSeconds: Math.round(s.active_s) }));
  return counts;
}

async function budgets(db: pg.Pool): Promise<BudgetStatus[]> {
  // The budgets table appears with the first run a worker opens.
  if ((await db.query<{ t: string | null }>("SELECT to_regclass('acia_budgets')::text AS t")).rows[0]?.t == null) return [];
  const r = await db.query<{ run_id: string; status: string; max_cost_usd: number | null; spent_usd: number; max_tokens: string | null; spent_tokens: string; usd: string; tokens: string; n: string }>(
    `SELECT b.run_id, r.status, b.max_cost_usd, b.spent_usd, b.max_tokens, b.spent_tokens,
            coalesce(sum(x.usd), 0) AS usd, coalesce(sum(x.tokens), 0) AS tokens, count(x.id) AS n
       FROM acia_budgets b JOIN acia_runs r ON r.run_id = b.run_id LEFT JOIN acia_budget_reservations x ON x.run_id = b.run_id
      WHERE r.status IN ('queued', 'running', 'awaiting_human', 'budget_exhausted')
      GROUP BY b.run_id, r.status ORDER BY b.run_id`,
  );
  return r.rows.map((b) => ({
    runId: b.run_id,
    status: b.status,
    maxCostUsd: b.max_cost_usd,
    spentUsd: b.spent_usd,
    reservedUsd: Number(b.usd),
    maxTokens: b.max_tokens === null ? null : Number(b.max_tokens),
    spentTokens: Number(b.spent_tokens),
    reservedTokens: Number(b.tokens),
    callsInFlight: Number(b.n),
  }));
}
