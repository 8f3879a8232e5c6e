// The reading commands (`verify`, `show`, `replay`, `bundle`, `wiki`) on fleet runs, with `--db`.
// Each fleet run is exported into a private temporary repository (`acia export`'s code, the sealed
// lines verbatim and the blobs byte for byte) and the local command runs on that copy, then the copy
// is deleted. One code path reads every ledger, so a fleet run is checked, shown and replayed exactly
// as a local one; the copy costs a few milliseconds per run, which reading commands can afford.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { RunId, systemClock } from '../core/acm/ids.js';
import { Git } from '../team/git.js';
import { AciaError, isAciaError } from '../core/errors.js';
import type { RunAnchor } from '../core/ledger/anchor.js';
import type { RunManifest } from '../core/ledger/run-vocabulary.js';
import { connectFleetDb, databaseUrl, type DbFlag } from '../fleet/fleet-db.js';
import { exportRun } from '../fleet/export.js';
import { checkRegularOrMissing, ensureRealDir } from '../core/contain/no-follow.js';
import { buildBundle, bundleDirOf } from '../core/ledger/bundle.js';
import { verifyRun, type RunVerification, type VerifyReport } from '../core/ledger/verify.js';
import { renderWiki } from '../core/wiki/render.js';
import { wikiCommand } from './commands/wiki-action.js';
import { replayCommand } from './replay-action.js';
import { repoOf, showOutputCommand, showRunCommand } from './runs-action.js';

export type { DbFlag } from '../fleet/fleet-db.js';

export interface FleetCopy {
  /** A git repository holding `.acia/runs/<runId>` for each run asked for. */
  repo: string;
  runs: { runId: string; runDir: string; manifest: RunManifest; anchor: RunAnchor | null; settings: Record<string, unknown> }[];
}

const isMissingTable = (e: unknown): boolean => (e as { code?: string }).code === '42P01';

/**
 * Copies the named fleet runs (all of them when `runIds` is undefined) into a temporary repository,
 * calls `fn` on it and deletes it. A run id the database does not have is RUN_NOT_FOUND.
 */
export async function withFleetRuns<T>(db: DbFlag, runIds: readonly string[] | undefined, fn: (copy: FleetCopy) => Promise<T>): Promise<T> {
  for (const id of runIds ?? []) if (!RunId.safeParse(id).success) throw new AciaError('USAGE', `${id} is not a run id`, { hint: 'list fleet runs with `acia runs --db ...`' });
  // For reading only: no migration, no queue.
  const pool = await connectFleetDb(databaseUrl(db, process.env), 2);
  const repo = await mkdtemp(join(tmpdir(), 'acia-fleet-read-'));
  try {
    let ids: string[];
    let rows: Map<string, { status: string; head_seq: number | null; head_hash: string | null; job: { settings?: Record<string, unknown> } }>;
    try {
      // Ids from the database become directory names: one that is not a run id is skipped, not followed.
      ids = runIds ? [...runIds] : (await pool.query<{ run_id: string }>('SELECT DISTINCT run_id FROM acia_ledger ORDER BY run_id')).rows.map((r) => r.run_id).filter((id) => RunId.safeParse(id).success);
      const found = await pool.query<{ run_id: string; status: string; head_seq: number | null; head_hash: string | null; job: { settings?: Record<string, unknown> } }>(
        'SELECT run_id, status, head_seq, head_hash, job FROM acia_runs WHERE run_id = ANY($1)',
        [ids],
      );
      rows = new Map(found.rows.map((r) => [r.run_id, r]));
    } catch (e) {
      if (isMissingTable(e)) throw new AciaError('RUN_NOT_FOUND', 'this database holds no fleet runs (no acia tables)', { hint: 'is --db the fleet database? `acia worker` and `acia submit` create the tables' });
      throw e;
    }
    // `git init` so the local commands, which look a run up from its repository, find this one.
    await new Git(systemClock).run(repo, ['init', '-q']);
    const runs: FleetCopy['runs'] = [];
    for (const runId of ids) {
      const row = rows.get(runId);
      const { dir, manifest } = await exportRun(pool, runId, repo, process.env, { anchor: false }).catch((e: unknown) => {
        // Submitted but not started: say so rather than "not found".
        if (row && isAciaError(e) && e.code === 'RUN_NOT_FOUND') throw new AciaError('RUN_NOT_FOUND', `fleet run ${runId} is ${row.status} and has no ledger entries yet`, { hint: 'watch it with `acia runs --db ...`' });
        throw e;
      });
      // The head the worker anchored in the database plays the part of the local anchor: rows cut off
      // the end of the chain, or a chain rewritten after it, show as TRUNCATED or ANCHOR_MISMATCH.
      const anchor: RunAnchor | null =
        row && row.head_seq !== null && row.head_hash !== null
          ? { runId, runDir: dir, head: { seq: row.head_seq, hash: row.head_hash }, status: ['queued', 'running'].includes(row.status) ? 'running' : row.status, updatedAt: new Date(0).toISOString() }
          : null;
      runs.push({ runId, runDir: dir, manifest, anchor, settings: row?.job.settings ?? {} });
    }
    return await fn({ repo, runs });
  } finally {
    await rm(repo, { recursive: true, force: true }).catch(() => undefined);
    await pool.end().catch(() => undefined);
  }
}

/** `acia verify [runId] --db`: one fleet run, or every run the database has a ledger for. */
export async function verifyFleet(db: DbFlag, runId: string | undefined): Promise<VerifyReport> {
  return withFleetRuns(db, runId === undefined ? undefined : [runId], async ({ runs }) => {
    const out: RunVerification[] = [];
    for (const r of runs) out.push(await verifyRun(r.runDir, { anchor: r.anchor }));
    return { ok: out.every((r) => r.ok), runs: out };
  });
}

/** `acia show <runId> --db [--json | --output ...]`: the local command on the run's copy. */
export async function showFleet(db: DbFlag, runId: string, o: { json: boolean; output?: string }): Promise<void> {
  await withFleetRuns(db, [runId], async ({ repo }) => {
    if (o.output !== undefined) await showOutputCommand(repo, runId, o.output);
    else await showRunCommand(repo, runId, o.json);
  });
}

/** `acia replay <runId> --db`: with the settings the run was submitted with, as a local replay uses the repo's. */
export async function replayFleet(db: DbFlag, runId: string, json: boolean): Promise<number> {
  return withFleetRuns(db, [runId], async ({ repo, runs }) => replayCommand(repo, runId, json, runs[0]?.settings ?? {}));
}

/**
 * `acia bundle <runId> --db [--out dir]`: the bundle is written where the user asks, by default in
 * `.acia/bundles/<runId>` of the --repo directory (refused if a link leads it elsewhere, as locally).
 */
export async function bundleFleet(db: DbFlag, runId: string, o: { out?: string; repo: string }): Promise<{ dir: string; files: number }> {
  let out = o.out === undefined ? undefined : resolve(o.out);
  if (out === undefined) {
    const root = await repoOf(o.repo, true);
    out = bundleDirOf(root, runId);
    ensureRealDir(root, dirname(out));
    checkRegularOrMissing(out, true);
  }
  const target = out;
  return withFleetRuns(db, [runId], async ({ repo }) => buildBundle(repo, runId, target));
}

/**
 * `acia wiki [list | show <page>] --db`: the wiki of every fleet run, rendered from the database on
 * demand. `rebuild` and `path` name a wiki on disk, which a fleet has none of: they are refused.
 */
export async function wikiFleet(db: DbFlag, action: string, page: string | undefined): Promise<void> {
  if (action !== 'list' && action !== 'show') {
    throw new AciaError('USAGE', `acia wiki ${action} --db: the fleet's wiki is rendered from the database on demand; use list or show <page>`, { hint: 'to keep one on disk: acia export <runId> --db ... --repo <dir>, then acia wiki rebuild --repo <dir>' });
  }
  await withFleetRuns(db, undefined, async ({ repo }) => {
    await renderWiki(repo);
    await wikiCommand(action, page, repo);
  });
}

