// The team's dependencies for a fleet job (a whole run, or one task of it): the user's settings from
// submit time, the run's ledger in PostgreSQL behind this worker's fence, and a workspace that pushes
// to the remote under the same fence.
import { realpathSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runDirOf } from '../core/contain/acia-state.js';
import { isRunId } from '../core/contain/run-id.js';
import { AciaError } from '../core/errors.js';
import { buildBundle } from '../core/ledger/bundle.js';
import { connectGuarded, retryTransient } from '../core/ledger/pg-retry.js';
import { systemClock } from '../core/acm/ids.js';
import { loadConfig, type RecordedSettings } from '../core/config/load.js';
import { parseLedgerLine } from '../core/ledger/line-reader.js';
import { foldRun } from '../core/run/reducer.js';
import { recordedSettings } from '../core/run/settings.js';
import { exportRun } from './export.js';
import { openPgLedger } from '../core/ledger/pg-ledger.js';
import type { RunLedger } from '../core/ledger/types.js';
import { dataOf, type LedgerEntry } from '../core/ledger/entry.js';
import { checkFence, type LedgerFence } from '../core/ledger/pg-lease.js';
import { createDeps, type FleetParts, type FleetPublish } from '../app/create-deps.js';
import { noHuman, type FleetDeps, type TeamDeps } from '../team/deps.js';
import { neverCancelled } from '../team/deps-defaults.js';
import type { Git } from '../team/git.js';
import { openRunBudget, PgBudgetGate } from './budget-gate.js';
import type { Fleet } from './fleet-db.js';
import { FleetWorkspace, type FleetWorkspaceOptions } from './fleet-workspace.js';
import type { JobCheckout } from './repo-cache.js';
import { applyWorkerPolicy, type WorkerPolicy } from './worker-policy.js';
import type { FleetCancelWatch } from './cancel.js';
import type { WorkerMetrics } from './metrics.js';
import { fleetMessages } from './messages.js';
import { LiveMailbox } from '../team/mailbox.js';

/**
 * What a job does with the run: hold it (the orchestrator: it hands the run's dev tasks out, given the
 * run's workspace to sync after each, and publishes its heads and status) or run one task of it.
 */
export type JobRole =
  | {
      kind: 'orchestrator';
      dispatch: (workspace: () => FleetWorkspace | undefined) => FleetDeps['dispatchTask'];
      publish: FleetPublish;
      /** The worker's own directory where the runs it finishes leave their replay bundles (`<cache>/bundles`). */
      bundlesDir: string;
    }
  | { kind: 'task'; taskId: string };

export async function jobDeps(
  fleet: Fleet,
  git: Git,
  o: {
    runId: string;
    settings: Record<string, unknown>;
    checkout: JobCheckout;
    fence: LedgerFence;
    worker: string;
    env: NodeJS.ProcessEnv;
    log: (line: string) => void;
    policy: WorkerPolicy;
    role: JobRole;
    /** A task job's worktree begun at hand-over (FleetWorkspaceOptions.early). */
    early?: FleetWorkspaceOptions['early'];
    cancels?: FleetCancelWatch;
    /** The worker's Prometheus metrics, when it serves them. */
    metrics?: WorkerMetrics;
  },
): Promise<TeamDeps> {
  // A task job's session opens the run's ledger first thing: it is read now, beside the settings.
  const early = o.fence.task ? earlyLedger(fleet, o) : null;
  // The submitter's settings as far as this worker's policy lets them go (never the sandbox off, unless
  // allowed), over the settings the run recorded when another worker started it (a takeover, a task job).
  const recorded = early ? await early.settings() : await recordedSettingsIn(fleet, o.runId);
  const config = loadConfig({ repo: o.checkout.dir, env: o.env, flags: applyWorkerPolicy(o.policy, o.settings), recorded }).config;
  // One budget for the whole run across the fleet: the orchestrator opens it (limits from the run's
  // settings, spent re-derived from its ledger); a task worker reserves against the same rows.
  const budgetGate = o.fence.task ? new PgBudgetGate(fleet.db, { worker: o.worker }) : await openRunBudget(fleet.db, o.runId, config.budget, { worker: o.worker });
  let made: FleetWorkspace | undefined;
  const metrics = o.metrics;
  // Messages (`acia say --db`): a task job takes its own task's; the orchestrator the rest, but for tasks out on jobs.
  const remote = new Set<string>();
  const messages = fleetMessages(fleet.db, o.runId, o.role.kind === 'task' ? { only: o.role.taskId } : { except: () => [...remote] });
  const parts: FleetParts = {
    runId: o.runId,
    workerName: o.worker,
    budgetGate,
    // Every model call this worker makes, counted where it is made (a task's entries folded by its
    // orchestrator are not counted twice); a worker serving no metrics counts nothing.
    countModelCall: metrics ? (model, usage, usd) => metrics.modelCall(model, usage, usd) : () => undefined,
    // `acia cancel --db` reaches a fleet run through its row, not a file in this worker's clone.
    cancelWatch: o.cancels ? o.cancels.watcher : neverCancelled,
    mailbox: () => new LiveMailbox(messages, MESSAGE_POLL_MS),
    openLedger: (d, runId, opts) => {
      const read = early?.take(d, runId, opts.create);
      return read ?? openPgLedger(fleet.db, runId, { clock: systemClock, create: opts.create, dir: d, fence: o.fence });
    },
    workspace: (repo, runId) => {
      made = new FleetWorkspace(git, repo, runId, {
        checkFence: () => checkFence(fleet.db, runId, o.fence, false),
        withRunLock: (fn) => withRunLock(fleet, runId, fn),
        remoteRefs: o.checkout.remoteRefs,
        ...(o.checkout.fetched ? { fetched: o.checkout.fetched } : {}),
        // A task job works in its task worktree and merges from objects: it checks the run branch out only on demand.
        runWorktreeOnDemand: o.role.kind === 'task',
        ...(o.early ? { early: o.early } : {}),
        fresh: o.checkout.fresh,
        ...(o.checkout.kept ? { kept: o.checkout.kept } : {}),
        pushedRunHead: {
          read: async () => (await fleet.db.query<{ head: string | null }>('SELECT run_branch_pushed AS head FROM acia_runs WHERE run_id = $1', [runId])).rows[0]?.head ?? null,
          write: async (head) => void (await fleet.db.query('UPDATE acia_runs SET run_branch_pushed = $2 WHERE run_id = $1', [runId, head])),
        },
      });
      return made;
    },
  };
  const local = { repo: o.checkout.dir, config, env: o.env, escalator: noHuman, warn: (m: string) => o.log(`${o.runId}: warning: ${m}`) };
  const role = o.role;
  return role.kind === 'task'
    ? createDeps({ kind: 'fleet-task', fleet: parts, ...local })
    : createDeps({
        kind: 'fleet-orchestrator',
        fleet: parts,
        dispatchTask: tracked(role.dispatch(() => made), remote),
        publish: role.publish,
        // A fleet run's bundle too (ACM v0.5 §5.10: complete before the run is marked finished, here its row in
        // the database): the ledger lives in PostgreSQL, so it is exported to a private directory and bundled
        // from there into the worker's own `<cache>/bundles/<run>` (the job's checkout is removed when the job
        // ends). A failure ends the session in error. `acia bundle <run> --db` builds one anywhere, any time.
        writeBundle: (_repo, runId) => writeFleetBundle(fleet, join(role.bundlesDir, runId), runId, o.env),
        ...local,
      });
}

/**
 * The run's ledger, opened (read, chain checked, fence checked) before the session asks for it; `take` gives
 * it once, to an open of the same run and directory that does not create the run, else null. `settings` are
 * the ones it recorded, read off the same rows (one query less on the job's path).
 */
function earlyLedger(
  fleet: Fleet,
  o: { runId: string; checkout: JobCheckout; fence: LedgerFence },
): { take(dir: string, runId: string, create: boolean): Promise<RunLedger> | null; settings(): Promise<RecordedSettings | null> } {
  const dir = runDirOf(realpathSync(o.checkout.dir), o.runId);
  const opened = openPgLedger(fleet.db, o.runId, { clock: systemClock, create: false, dir, fence: o.fence, blobsFor: taskBlobs });
  let read: Promise<RunLedger> | null = opened;
  // Awaited by the session's open; a job that ends before it must not leave it unhandled.
  read.catch(() => undefined);
  return {
    settings: async () => recordedSettings(foldRun((await opened).entries())),
    take: (d, runId, create) => {
      const r = read;
      read = null;
      return r !== null && d === dir && runId === o.runId && !create ? r : null;
    },
  };
}

/** What a task job reads back from blobs before its agent starts: the recorded context packet and the roles. */
function taskBlobs(entries: readonly LedgerEntry[]): string[] {
  const roles = dataOf(entries, 'ROLES_LOADED').flatMap((d) => [...d.roles, ...d.skills].map((r) => r.ref));
  return [...dataOf(entries, 'CONTEXT_BUILT').map((d) => d.packetRef), ...roles];
}

/** How often a session looks for its messages in the database (a local inbox is a directory read: 200 ms). */
const MESSAGE_POLL_MS = 500;

/** The dispatcher, keeping `out` the set of tasks on a job now (their worker takes their messages). */
function tracked(dispatch: FleetDeps['dispatchTask'], out: Set<string>): FleetDeps['dispatchTask'] {
  return async (ctx, taskId) => {
    out.add(taskId);
    try {
      return await dispatch(ctx, taskId);
    } finally {
      out.delete(taskId);
    }
  };
}

/** The settings a run recorded so far (null before it started): only its RUN_STARTED and RUN_RESUMED rows are read. */
async function recordedSettingsIn(fleet: Fleet, runId: string): Promise<RecordedSettings | null> {
  // Canonical JSON escapes quotes inside strings, so only an entry's own type matches.
  const rows = await retryTransient(() =>
    fleet.db.query<{ line: string }>(`SELECT line FROM acia_ledger WHERE run_id = $1 AND (line LIKE '%"type":"RUN_STARTED"%' OR line LIKE '%"type":"RUN_RESUMED"%') ORDER BY seq`, [runId]),
  );
  if (rows.rows.length === 0) return null;
  return recordedSettings(foldRun(rows.rows.map((r) => parseLedgerLine(r.line, `run ${runId} in the database`))));
}

/**
 * Runs `fn` holding the run's git lock: a session-level advisory lock on its own connection, so a
 * worker that dies (or loses the database) lets it go with the connection.
 */
export async function withRunLock<T>(fleet: Fleet, runId: string, fn: () => Promise<T>): Promise<T> {
  const key = `acia-run-git:${runId}`;
  // Taking the lock waits out a database restart like any other query of the run (a fresh connection
  // each time: a lock held by a connection that died was released with it).
  const client = await retryTransient(async () => {
    const c = await connectGuarded(fleet.db);
    try {
      // A holder cut off from the database must not keep every other merge of the run waiting: the
      // server closes a session idle this long, which releases its lock (a merge takes seconds).
      await c.query(`SET idle_session_timeout = '${LOCK_IDLE_TIMEOUT}'`);
      await c.query('SELECT pg_advisory_lock(hashtext($1))', [key]);
      return c;
    } catch (e) {
      c.release(true);
      throw e;
    }
  });
  let broken = false;
  try {
    return await fn();
  } finally {
    try {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [key]);
      await client.query('RESET idle_session_timeout');
    } catch {
      // A connection that could not unlock is closed, which unlocks.
      broken = true;
    }
    client.release(broken);
  }
}

/** How long the run's git lock outlives a holder that stopped talking to the database. */
const LOCK_IDLE_TIMEOUT = '60s';

/** Exports the run from the database and writes its bundle to `out` (a directory of the worker's own). */
async function writeFleetBundle(fleet: Fleet, out: string, runId: string, env: NodeJS.ProcessEnv): Promise<void> {
  // The id names the directory: only a checked run id does.
  if (!isRunId(runId)) throw new AciaError('USAGE', `not a run id: ${String(runId)}`);
  await mkdir(dirname(out), { recursive: true });
  const scratch = await mkdtemp(join(tmpdir(), 'acia-fleet-bundle-'));
  try {
    await exportRun(fleet.db, runId, scratch, env, { anchor: false });
    await buildBundle(scratch, runId, out);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
