// `acia worker`: takes runs from the fleet's queue and runs each like `acia run` would, with three
// differences: the ledger is the run's rows in PostgreSQL, the repository is a fresh clone of the
// submitted URL at the submitted base, and every checkpoint and merge is pushed back to that remote
// as it happens, so a run whose worker died resumes on another worker from its ledger and branches.
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { hostname } from 'node:os';
import type PgBoss from 'pg-boss';
import { asRunId, systemClock } from '../core/acm/ids.js';
import { loadConfig } from '../core/config/load.js';
import { errorMessage } from '../core/errors.js';
import { openPgLedger } from '../core/ledger/pg-ledger.js';
import { buildDeps } from '../app/build-deps.js';
import { noHuman } from '../team/deps.js';
import { Git } from '../team/git.js';
import { resumeRun, startRun, type RunResult } from '../team/team.js';
import { Workspace, type TaskWorktree } from '../team/workspace.js';
import { RUN_QUEUE, setRunStatus, type Fleet } from './fleet-db.js';
import { pushWithRetry, remoteGit } from './remote-git.js';
import { retryTransient } from '../core/ledger/pg-retry.js';
import { LEASE_SECONDS, startHeartbeat } from './liveness.js';
import { startOrphanCheck } from './orphans.js';
import type { RunJob } from './submit.js';

export interface WorkerOptions {
  concurrency: number;
  /** Where runs' clones live on this machine. */
  cacheDir: string;
  env: NodeJS.ProcessEnv;
  name?: string;
  log: (line: string) => void;
}

export interface RunningWorker {
  name: string;
  /** Finishes the runs in hand, takes no new ones. */
  stop(): Promise<void>;
}

export async function startWorker(fleet: Fleet, o: WorkerOptions): Promise<RunningWorker> {
  const name = o.name ?? `${hostname()}:${process.pid}`;
  const heartbeat = await startHeartbeat(fleet, name, o.concurrency, o.log);
  const inHand = new Set<Promise<unknown>>();
  const ids: string[] = [];
  let stopping = false;
  // The runs this worker is running now, by id: the orphan check requeues any other run marked as held here.
  const holding = new Set<string>();
  const orphans = startOrphanCheck(fleet, name, holding, o.log);
  for (let i = 0; i < o.concurrency; i++) {
    ids.push(
      await fleet.boss.work<RunJob>(RUN_QUEUE, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async ([job]: PgBoss.Job<RunJob>[]) => {
        if (!job) return;
        if (stopping) {
          // A fetch already under way when SIGTERM came handed this job over: give it back (pg-boss
          // re-delivers a failed job to another worker after retryDelay) rather than start a run now.
          await fleet.boss.fail(RUN_QUEUE, job.id, { reason: `worker ${name} is stopping` });
          return;
        }
        if (!(await stillToRun(fleet, job.data))) {
          o.log(`${job.data.runId}: ended, or held by a live worker; this stale job is dropped`);
          return;
        }
        holding.add(job.data.runId);
        const running = (async () => {
          await setRunStatus(fleet.db, job.data.runId, { status: 'running', worker: name, job_id: job.id, leased_at: new Date() });
          return runJob(fleet, job.data, { ...o, name });
        })();
        inHand.add(running);
        try {
          const result = await running;
          o.log(`${job.data.runId}: ${result.reason} — ${result.message}`);
          // pg-boss completes the job without waiting or retrying; if the database is away at that moment
          // the job would stay active for its whole expiry and block the run's next job (an answer).
          await retryTransient(() => fleet.boss.complete(RUN_QUEUE, job.id)).catch(() => undefined);
        } catch (e) {
          // The job fails and pg-boss retries it (another worker may take it); the run row says why. Both
          // are recorded here, waiting out a database that is away: pg-boss's own record of a failed job is
          // not awaited, and a failure nobody recorded leaves the run `running` on a live worker.
          o.log(`${job.data.runId}: ${errorMessage(e)}`);
          const patient = { toleranceMs: 10 * 60_000 };
          await retryTransient(() => setRunStatus(fleet.db, job.data.runId, { status: 'error', worker: name, message: errorMessage(e) }), patient).catch(() => undefined);
          await retryTransient(() => fleet.boss.fail(RUN_QUEUE, job.id, { message: errorMessage(e) }), patient).catch(() => undefined);
        } finally {
          inHand.delete(running);
          holding.delete(job.data.runId);
        }
      }),
    );
  }
  o.log(`worker ${name}: taking runs (${o.concurrency} at a time)`);
  return {
    name,
    stop: async () => {
      stopping = true;
      for (const id of ids) await fleet.boss.offWork({ id });
      // Graceful: the runs in hand finish (their heartbeats go on meanwhile), then the worker leaves.
      await Promise.allSettled([...inHand]);
      orphans.stop();
      await heartbeat.stop();
    },
  };
}

/**
 * Whether a job still has work: a job pg-boss hands out again (its completion was lost in a database
 * outage, or it expired) for a run that has since ended must not run it a second time.
 */
async function stillToRun(fleet: Fleet, job: RunJob): Promise<boolean> {
  const r = await retryTransient(() =>
    fleet.db.query<{ status: string; holder_alive: boolean }>(
      `SELECT r.status, (w.name IS NOT NULL AND NOT w.stopped AND w.seen_at >= now() - make_interval(secs => $2)) AS holder_alive
       FROM acia_runs r LEFT JOIN acia_workers w ON w.name = r.worker WHERE r.run_id = $1`,
      [job.runId, LEASE_SECONDS],
    ),
  );
  const row = r.rows[0];
  if (row === undefined) return true;
  // Running on a worker that still beats: this is the job expiring under a long run, not a lost worker
  // (the reaper requeues those); a second worker must not run it beside the first.
  if (row.status === 'running') return !row.holder_alive;
  return ['queued', 'error'].includes(row.status);
}

/** One run on this worker, from a fresh clone; a run the database already has entries for is resumed. */
export async function runJob(fleet: Fleet, job: RunJob, o: WorkerOptions & { name: string }): Promise<RunResult> {
  const git = new Git(systemClock);
  const dir = join(o.cacheDir, job.runId);
  await rm(dir, { recursive: true, force: true });
  await mkdir(o.cacheDir, { recursive: true });
  await remoteGit(o.cacheDir, ['clone', '-q', '--no-checkout', job.repoUrl, dir]);
  // The run's own branches, when an earlier worker pushed some: they are where it stopped.
  await remoteGit(dir, ['fetch', '-q', 'origin', `+refs/heads/acia/${job.runId}:refs/heads/acia/${job.runId}`, `+refs/heads/acia-tasks/${job.runId}/*:refs/heads/acia-tasks/${job.runId}/*`], { allowFail: true });
  const base = (await git.run(dir, ['rev-parse', '--verify', `${job.base}^{commit}`], { allowFail: true })).exitCode === 0 ? job.base : `origin/${job.base}`;
  await git.run(dir, ['checkout', '-q', '--detach', base]);

  const config = loadConfig({ repo: dir, env: o.env, flags: job.settings }).config;
  const deps = await buildDeps({ repo: dir, config, env: o.env, escalator: noHuman, warn: (m) => o.log(`${job.runId}: warning: ${m}`) });
  const runDir = join(dir, '.acia', 'runs', job.runId);
  await mkdir(runDir, { recursive: true });
  deps.ids = { runId: () => asRunId(job.runId) };
  deps.openLedger = (d, runId, opts) => openPgLedger(fleet.db, runId, { clock: systemClock, create: opts.create, dir: d });
  // The bundle is built from a ledger file; here the ledger lives in PostgreSQL (`acia export` writes it out).
  delete deps.writeBundle;
  deps.workspace = (repo, runId) => new PushingWorkspace(git, repo, runId, job.repoUrl);
  // The head is anchored in the database too (beside the local anchor), where \`acia verify --db\` finds it.
  const localAnchor = deps.anchor;
  if (localAnchor) {
    deps.anchor = {
      check: localAnchor.check,
      write: async (d, runId, head, status) => {
        await localAnchor.write(d, runId, head, status);
        await setRunStatus(fleet.db, runId, { head_seq: head?.seq ?? null, head_hash: head?.hash ?? null });
      },
    };
  }
  const local = deps.writeManifest;
  deps.writeManifest = async (d, manifest) => {
    await local(d, manifest);
    await setRunStatus(fleet.db, job.runId, { status: manifest.status, worker: o.name, cost_usd: manifest.costUsd });
  };

  const resumed = (await fleet.db.query('SELECT 1 FROM acia_ledger WHERE run_id = $1 LIMIT 1', [job.runId])).rowCount !== 0;
  await setRunStatus(fleet.db, job.runId, { status: 'running', worker: o.name });
  const result = resumed ? await resumeRun(deps, { dir, runId: job.runId, ...(job.answer === undefined ? {} : { answer: job.answer }) }) : await startRun(deps, { dir, goal: job.goal });
  await setRunStatus(fleet.db, job.runId, {
    status: result.reason,
    message: result.message,
    cost_usd: result.costUsd,
    run_branch: result.runBranch,
    head_commit: result.headCommit,
  });
  await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  return result;
}

/** A workspace that pushes each checkpoint to its task branch and each merge to the run branch. */
class PushingWorkspace extends Workspace {
  constructor(
    g: Git,
    repo: string,
    runId: string,
    private readonly remote: string,
  ) {
    super(g, repo, runId);
  }

  override async checkpoint(taskId: string, wt: TaskWorktree, message: string): Promise<{ commit: string | null; files: string[] }> {
    const r = await super.checkpoint(taskId, wt, message);
    if (r.commit) await this.push(`${wt.branch}`);
    return r;
  }

  /** A dev.merge task's resolution is its checkpoint: pushed like one. */
  override async commitMerge(taskId: string, wt: TaskWorktree, message: string): Promise<{ commit: string; files: string[] }> {
    const r = await super.commitMerge(taskId, wt, message);
    await this.push(wt.branch);
    return r;
  }

  override async merge(taskId: string): Promise<{ commit: string | null; conflict: boolean; files: string[]; hunks?: string }> {
    const r = await super.merge(taskId);
    if (r.commit) await this.push(this.runBranch);
    return r;
  }

  override async openRun(base: string, create: boolean): Promise<void> {
    await super.openRun(base, create);
    await this.push(this.runBranch);
  }

  private async push(branch: string): Promise<void> {
    await pushWithRetry(this.repo, this.remote, branch);
  }
}
