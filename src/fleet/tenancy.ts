// Who may see and touch which fleet run, enforced by PostgreSQL itself. A run records its submitter:
// the role of the session that inserted it (`current_user`, which a client cannot choose), plus an
// optional free-text label. Row-level security on the runs, the ledger and the blobs lets any other role
// (each submitter logs in as its own, a member of `acia_submitter`) see and change only its own runs;
// the role that owns the tables (the workers', which created them) and superusers see everything. A
// submitter has no rights on the queue, the leases or the budgets: its submissions and answers are
// requests on its own rows, which the workers turn into jobs (dispatch.ts).
import type pg from 'pg';

/** The group role submitters' login roles are members of. */
const SUBMITTER_ROLE = 'acia_submitter';

/** Ownership columns, the run id's shape, row-level security and the submitters' grants (run by the owner, idempotent). */
export const TENANCY_SCHEMA = `
ALTER TABLE acia_runs ADD COLUMN IF NOT EXISTS submitter text NOT NULL DEFAULT current_user;
ALTER TABLE acia_runs ADD COLUMN IF NOT EXISTS submitter_label text;
-- A submitter's request for a worker (a new run, an answer, a resume), and the answer it carries.
ALTER TABLE acia_runs ADD COLUMN IF NOT EXISTS requested_at timestamptz;
ALTER TABLE acia_runs ADD COLUMN IF NOT EXISTS answer text;
CREATE INDEX IF NOT EXISTS acia_runs_requested ON acia_runs (requested_at) WHERE requested_at IS NOT NULL;
-- Run ids name directories on workers: whoever inserts a row, the id is a plain name (core/contain/run-id.ts).
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'acia_runs_run_id_shape') THEN
    ALTER TABLE acia_runs ADD CONSTRAINT acia_runs_run_id_shape CHECK (run_id ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$' AND strpos(run_id, '..') = 0) NOT VALID;
  END IF;
END $$;
ALTER TABLE acia_runs ENABLE ROW LEVEL SECURITY;
ALTER TABLE acia_ledger ENABLE ROW LEVEL SECURITY;
ALTER TABLE acia_blobs ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS acia_runs_own ON acia_runs;
CREATE POLICY acia_runs_own ON acia_runs USING (submitter = current_user::text) WITH CHECK (submitter = current_user::text);
-- The subquery on acia_runs is itself filtered for the caller: a ledger row shows when its run does.
DROP POLICY IF EXISTS acia_ledger_own ON acia_ledger;
CREATE POLICY acia_ledger_own ON acia_ledger FOR SELECT USING (EXISTS (SELECT 1 FROM acia_runs r WHERE r.run_id = acia_ledger.run_id));
DROP POLICY IF EXISTS acia_blobs_own ON acia_blobs;
CREATE POLICY acia_blobs_own ON acia_blobs FOR SELECT USING (EXISTS (SELECT 1 FROM acia_runs r WHERE r.run_id = acia_blobs.run_id));
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${SUBMITTER_ROLE}') THEN
    BEGIN
      CREATE ROLE ${SUBMITTER_ROLE} NOLOGIN;
    EXCEPTION WHEN insufficient_privilege OR duplicate_object THEN
      RAISE NOTICE 'acia: could not create role ${SUBMITTER_ROLE}; create it and re-run a worker to grant it';
    END;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${SUBMITTER_ROLE}') THEN
    GRANT SELECT ON acia_runs, acia_ledger, acia_blobs, acia_workers TO ${SUBMITTER_ROLE};
    GRANT INSERT (run_id, goal, repo_url, base, status, job, submitter_label, requested_at) ON acia_runs TO ${SUBMITTER_ROLE};
    GRANT UPDATE (status, message, requested_at, answer, updated_at, cancel_requested_at, cancel_requested_by) ON acia_runs TO ${SUBMITTER_ROLE};
  END IF;
END $$;
`;

/**
 * Whether this session may (and must) run the fleet's migrations: the tables are missing, or its role
 * owns them. A submitter's role owns nothing and may not create tables: it uses the schema as it is.
 */
export async function mayMigrate(db: pg.Pool): Promise<boolean> {
  const r = await db.query<{ missing: boolean; owner: boolean }>(
    `SELECT c.oid IS NULL AS missing, COALESCE(pg_has_role(current_user, c.relowner, 'USAGE'), false) AS owner
     FROM (SELECT to_regclass('acia_runs') AS oid) t LEFT JOIN pg_class c ON c.oid = t.oid`,
  );
  const row = r.rows[0];
  return row === undefined || row.missing || row.owner;
}
