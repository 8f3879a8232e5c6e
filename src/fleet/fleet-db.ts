// The fleet's database: one PostgreSQL that holds the run ledgers (PgLedger), the runs table, and
// pg-boss's job queue. Every fleet command opens it through here.
import pg from 'pg';
import PgBoss from 'pg-boss';
import { AciaError, errorMessage } from '../core/errors.js';
import { migrateLedger } from '../core/ledger/pg-ledger.js';
import { retryTransient } from '../core/ledger/pg-retry.js';
import { mayMigrate, TENANCY_SCHEMA } from './tenancy.js';
import { MESSAGES_SCHEMA } from './messages.js';

export const RUN_QUEUE = 'acia-runs';
/** One job per dev task handed out by a run's orchestrator (task-jobs.ts). */
export const TASK_QUEUE = 'acia-tasks';

const RUNS_SCHEMA = `
CREATE TABLE IF NOT EXISTS acia_runs (
  run_id text PRIMARY KEY,
  goal text NOT NULL,
  repo_url text NOT NULL,
  base text NOT NULL,
  status text NOT NULL,
  worker text,
  message text,
  cost_usd double precision,
  run_branch text,
  head_commit text,
  job jsonb NOT NULL,
  job_id text,
  submitted_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- Which worker took each task job: the orchestrator hands a task out again when that worker goes silent.
CREATE TABLE IF NOT EXISTS acia_task_jobs (
  job_id text PRIMARY KEY,
  run_id text NOT NULL,
  task_id text NOT NULL,
  worker text NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS acia_workers (
  name text PRIMARY KEY,
  concurrency integer NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  seen_at timestamptz NOT NULL DEFAULT now(),
  stopped boolean NOT NULL DEFAULT false
);
-- The run's anchored head (the worker records it where a local run writes its anchor): acia verify --db
-- catches ledger rows cut off the end against it.
ALTER TABLE acia_runs ADD COLUMN IF NOT EXISTS head_seq integer;
ALTER TABLE acia_runs ADD COLUMN IF NOT EXISTS head_hash text;
-- When the worker now holding the run took it (acia fleet status shows leases).
ALTER TABLE acia_runs ADD COLUMN IF NOT EXISTS leased_at timestamptz;
-- What each worker saw of the database (acia fleet status): transient errors it rode out, its last outage.
ALTER TABLE acia_workers ADD COLUMN IF NOT EXISTS db_errors bigint NOT NULL DEFAULT 0;
ALTER TABLE acia_workers ADD COLUMN IF NOT EXISTS last_outage_at timestamptz;
ALTER TABLE acia_workers ADD COLUMN IF NOT EXISTS last_outage_ms integer;
-- acia cancel --db: who asked the run to stop, and when (the worker that runs or closes it records them).
ALTER TABLE acia_runs ADD COLUMN IF NOT EXISTS cancel_requested_at timestamptz;
ALTER TABLE acia_runs ADD COLUMN IF NOT EXISTS cancel_requested_by text;
-- Where the last push of the run branch left it (fleet-workspace.ts): a worker about to merge whose clone
-- already has that commit skips fetching the branch. Only a hint: the push still leases on what it fetched.
ALTER TABLE acia_runs ADD COLUMN IF NOT EXISTS run_branch_pushed text;
`;

export interface Fleet {
  db: pg.Pool;
  boss: PgBoss;
  close(): Promise<void>;
}

/**
 * What a fleet command other than the worker holds: the database, and the queue only when this session's
 * role owns the fleet's tables (a submitter's role has no rights on the queue: its requests go through
 * its own rows, which the workers turn into jobs).
 */
export interface FleetClient {
  db: pg.Pool;
  boss: PgBoss | null;
  close(): Promise<void>;
}

/** `--db [url]` as commander gives it: the URL, true for a bare `--db`, undefined when absent. */
export type DbFlag = string | boolean | undefined;

/**
 * The database URL, the same way for every command: `--db <url>`, else (a bare `--db`, or none where
 * the command is a fleet command anyway) ACIA_DATABASE_URL; neither is a usage error. A value that is no
 * connection string is refused too: `acia cancel --db <runId>` would otherwise take the run id for the URL.
 */
export function databaseUrl(flag: DbFlag, env: NodeJS.ProcessEnv): string {
  const url = typeof flag === 'string' ? flag : env.ACIA_DATABASE_URL;
  if (!url) throw new AciaError('USAGE', 'no database: pass --db postgres://... or set ACIA_DATABASE_URL (then a bare --db)');
  if (!/^postgres(ql)?:\/\//i.test(url) && !/^\s*\w+\s*=/.test(url)) {
    throw new AciaError('USAGE', `--db expects a postgres:// URL, got ${JSON.stringify(url.slice(0, 80))}`, { hint: 'a bare --db takes ACIA_DATABASE_URL; put it after the run id (acia cancel <runId> --db), or give the URL' });
  }
  return url;
}

/**
 * A pool on the fleet database, checked with one query: an unreachable server is one clear line
 * (CONFIG_INVALID) and no pool is left open. No migration, no queue: `openFleet` adds those.
 */
export async function connectFleetDb(url: string, max: number): Promise<pg.Pool> {
  const db = new pg.Pool({ connectionString: url, max });
  // An idle client that loses its server (a restart) must not crash the process; the next query reconnects.
  db.on('error', () => undefined);
  try {
    await db.query('SELECT 1');
  } catch (e) {
    await db.end();
    throw new AciaError('CONFIG_INVALID', `cannot reach the fleet database: ${errorMessage(e)}`, { hint: 'check --db / ACIA_DATABASE_URL and that PostgreSQL is running' });
  }
  return db;
}

/** Creates or updates the fleet's tables, when this session's role may (it owns them, or there are none yet). */
async function migrate(db: pg.Pool): Promise<boolean> {
  if (!(await mayMigrate(db))) return false;
  await migrateLedger(db);
  await db.query(`SELECT pg_advisory_lock(472105); ${RUNS_SCHEMA} ${TENANCY_SCHEMA} ${MESSAGES_SCHEMA} SELECT pg_advisory_unlock(472105);`);
  return true;
}

async function startBoss(url: string, supervise: boolean): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString: url, max: 4, supervise, schedule: false });
  boss.on('error', () => undefined);
  await boss.start();
  await boss.createQueue(RUN_QUEUE).catch(() => undefined);
  await boss.createQueue(TASK_QUEUE).catch(() => undefined);
  return boss;
}

export async function openFleet(url: string, o: { queue?: boolean } = {}): Promise<Fleet> {
  const db = await connectFleetDb(url, 8);
  await migrate(db);
  const boss = await startBoss(url, o.queue !== false);
  return {
    db,
    boss,
    close: async () => {
      await boss.stop({ graceful: true, wait: true, timeout: 10_000 }).catch(() => undefined);
      await db.end();
    },
  };
}

/** For submit, resume, status and export: the queue only for the tables' owner (see FleetClient). */
export async function openFleetClient(url: string): Promise<FleetClient> {
  const db = await connectFleetDb(url, 4);
  let boss: PgBoss | null = null;
  try {
    if (await migrate(db)) boss = await startBoss(url, false);
  } catch (e) {
    await db.end();
    throw e;
  }
  return {
    db,
    boss,
    close: async () => {
      await boss?.stop({ graceful: true, wait: true, timeout: 10_000 }).catch(() => undefined);
      await db.end();
    },
  };
}

export interface FleetRunRow {
  run_id: string;
  goal: string;
  repo_url: string;
  base: string;
  status: string;
  worker: string | null;
  message: string | null;
  cost_usd: number | null;
  run_branch: string | null;
  head_commit: string | null;
  job_id: string | null;
  head_seq: number | null;
  head_hash: string | null;
  leased_at: Date | null;
  submitted_at: Date;
  updated_at: Date;
  /** The role that submitted it (PostgreSQL's current_user at the insert), and the label it gave. */
  submitter: string;
  submitter_label: string | null;
  /** The workers its task attempts ran on (TASK_STARTED.worker), in name order. */
  task_workers: string[];
}

export async function listFleetRuns(db: pg.Pool): Promise<FleetRunRow[]> {
  // Only TASK_STARTED lines are parsed (the LIKE keeps a long ledger's other lines out of it).
  return (
    await db.query<FleetRunRow>(
      `SELECT r.*, COALESCE((SELECT array_agg(DISTINCT w ORDER BY w) FROM (
         SELECT (l.line::jsonb)->'data'->>'worker' AS w FROM acia_ledger l
         WHERE l.run_id = r.run_id AND l.line LIKE '%"TASK_STARTED"%' AND (l.line::jsonb)->>'type' = 'TASK_STARTED') s WHERE w IS NOT NULL), '{}') AS task_workers
       FROM acia_runs r ORDER BY r.submitted_at, r.run_id`,
    )
  ).rows;
}

/**
 * Updates a run's row. With `epoch`, only while that lease epoch is the run's current one: a worker
 * that lost the run never writes its status over the new owner's. Idempotent, so a database restart is
 * waited out rather than failing the run.
 */
export async function setRunStatus(
  db: pg.Pool,
  runId: string,
  fields: Partial<Pick<FleetRunRow, 'status' | 'worker' | 'message' | 'cost_usd' | 'run_branch' | 'head_commit' | 'job_id' | 'head_seq' | 'head_hash' | 'leased_at'>>,
  epoch?: number,
): Promise<void> {
  const keys = Object.keys(fields) as (keyof typeof fields)[];
  const sets = keys.map((k, i) => `${k} = $${i + 2}`);
  const values: unknown[] = [runId, ...keys.map((k) => fields[k] ?? null)];
  const fenced = epoch === undefined ? '' : ` AND (SELECT epoch FROM acia_leases WHERE run_id = $1 AND scope = '') = $${values.push(epoch)}`;
  await retryTransient(() => db.query(`UPDATE acia_runs SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE run_id = $1${fenced}`, values));
}
