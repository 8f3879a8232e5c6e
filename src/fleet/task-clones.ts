// A worker's clones for task jobs, kept between them. Making a clone for each task job (clone of the
// mirror, set-url, checkout of the base, the run worktree, and the first git call's driver query in a new
// config) was most of a hand-over. Two things are kept instead:
// - per run, the clones of its finished task jobs: the next task job of the same run on this worker
//   fetches the run's branches into one and brings its run worktree to the run branch;
// - per repository, one spare: a clone of the mirror made in the background after a job, that no run has
//   touched yet; a task job of a run this worker holds no clone of takes it and fetches its branches.
// A clone serves one run for its whole life and one job at a time: it is never handed to another run
// (another submitter's), and it goes when its run ends, when it has been idle a while, when the worker
// stops, or when anything about it is not as the worker left it. Publishing is guarded as in a fresh
// clone: the job's fence is checked before every push, and each push leases on what this job fetched.
import { randomUUID } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runWorktreesDir } from '../core/contain/acia-state.js';
import { checkRealDir } from '../core/contain/no-follow.js';
import { guardAciaState } from '../core/contain/clone-guard.js';
import { errorMessage } from '../core/errors.js';
import type { Git } from '../team/git.js';
import { cloneAt, detachAt, fetchBehind, mirrorWith, type JobCheckout } from './repo-cache.js';
import type { WorkerPolicy } from './worker-policy.js';

/** An idle clone of a run older than this is removed (its run may be waiting on a human, or over). */
const IDLE_MS = 10 * 60_000;
/** Idle run clones kept at most, oldest removed first. */
const MAX_IDLE = 8;
/** Spares kept at most (one per repository). */
const MAX_SPARES = 4;

/** A clone whose seal cannot be read: never kept (putBack and prepare refuse it), so never matched. */
const UNSEALED = '\0unreadable';

interface Clone {
  dir: string;
  repoUrl: string;
  /** The commit (or branch) its main checkout is detached at. */
  base: string;
  /** The run it serves; null for a spare. */
  runId: string | null;
  /** What `.git/config` and the alternates file held when the worker put it back: any change discards it. */
  seal: string;
  /** Where the run worktree stood, clean, when the clone was put back. */
  runHead: string;
  /** A spare on which the clone guard passed when it was made (at `base`, before any job touched it). */
  guarded?: boolean;
  idleSince: number;
}

export interface TakenClone {
  checkout: JobCheckout;
  /** Gives the clone back after the job: kept for the run's next job when `ok`, else removed. */
  release(ok: boolean): void;
}

export interface TaskClonesOptions {
  /** The worker's cache directory: clones live under `<cache>/task-clones`. */
  cacheDir: string;
  policy: WorkerPolicy;
  log: (line: string) => void;
}

export class TaskClones {
  private readonly root: string;
  private readonly idle: Clone[] = [];
  private readonly spares = new Map<string, Promise<Clone | null>>();
  /** Background work (put-backs, spares, removals): waited for when the worker stops. */
  private readonly background = new Set<Promise<unknown>>();
  private closed = false;

  constructor(
    private readonly git: Git,
    private readonly o: TaskClonesOptions,
  ) {
    this.root = join(o.cacheDir, 'task-clones');
  }

  /** Removes what a worker that died left here (its clones are no one's now). */
  async start(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }

  /**
   * A clone for one task job of `runId`. A kept clone or a spare is given at once, its fetch of the run's
   * branches still under way (`checkout.fetched`: the workspace waits for it before it opens the run), so
   * the job's database side and its reads of the base (settings, clone guard, ledger, context) overlap it.
   */
  async take(job: { repoUrl: string; runId: string; base: string; runHead?: string }): Promise<TakenClone> {
    // A job that checks its task branch out early (it names the run head) fetches the task branches as remote-tracking refs only.
    const trackTasksOnly = job.runHead !== undefined;
    const kept = this.takeKept(job);
    if (kept) {
      const { remoteRefs, fetched } = fetchBehind(this.git, kept.dir, job.runId, { kept: true, trackTasksOnly });
      return this.lend({ ...kept, runId: job.runId }, { dir: kept.dir, remoteRefs, fetched, fresh: { open: false }, kept: { runHead: kept.runHead } });
    }
    const spare = await this.takeSpare(job.repoUrl);
    const dir = spare?.dir ?? join(this.root, randomUUID());
    const clone: Clone = { dir, repoUrl: job.repoUrl, base: job.base, runId: job.runId, seal: '', runHead: '', idleSince: 0 };
    try {
      if (spare === null) await cloneAt(this.git, { ...this.o, repoUrl: job.repoUrl, base: job.base, dir });
      // A spare made for another base: the mirror must hold this one before the checkout.
      else if (spare.base !== job.base) await mirrorWith(this.git, { ...this.o, repoUrl: job.repoUrl, base: job.base });
      // The base is checked out before the job reads it (the fetch sets only the run's own refs).
      if (spare?.base !== job.base) await detachAt(this.git, dir, job.base);
    } catch (e) {
      this.discard(dir);
      throw e;
    }
    const { remoteRefs, fetched } = fetchBehind(this.git, dir, job.runId, { trackTasksOnly });
    // A spare at the job's base is as the worker made and guarded it (its seal was checked just now).
    const guarded = spare?.guarded === true && spare.base === job.base;
    return this.lend(clone, { dir, remoteRefs, fetched, fresh: { open: true }, ...(guarded ? { guarded } : {}) });
  }

  /** Removes every clone; later jobs get none kept. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.background]);
    this.idle.length = 0;
    this.spares.clear();
    await rm(this.root, { recursive: true, force: true });
  }

  /** The runs whose clones sit idle here: the worker asks the database which of them have ended. */
  idleRuns(): string[] {
    return [...new Set(this.idle.flatMap((c) => (c.runId === null ? [] : [c.runId])))];
  }

  /** Removes the idle clones of runs that `ended`, of runs idle too long, and the oldest past the cap. */
  sweep(ended: ReadonlySet<string>, now = Date.now()): void {
    for (let i = this.idle.length - 1; i >= 0; i--) {
      const c = this.idle[i]!;
      if ((c.runId !== null && ended.has(c.runId)) || now - c.idleSince > IDLE_MS) {
        this.idle.splice(i, 1);
        this.discard(c.dir);
      }
    }
    // Put back in order: the first is the one idle longest.
    while (this.idle.length > MAX_IDLE) this.discard(this.idle.shift()!.dir);
  }

  private takeKept(job: { repoUrl: string; runId: string; base: string }): Clone | null {
    for (let i = this.idle.length - 1; i >= 0; i--) {
      const c = this.idle[i]!;
      if (c.runId !== job.runId) continue;
      this.idle.splice(i, 1);
      // The same run always names the same repository and base; a job that does not is not given its clone.
      if (c.repoUrl === job.repoUrl && c.base === job.base && sealOf(c.dir) === c.seal) return c;
      this.o.log(`task clone ${c.dir}: not as this worker left it; removed`);
      this.discard(c.dir);
    }
    return null;
  }

  private async takeSpare(repoUrl: string): Promise<Clone | null> {
    const pending = this.spares.get(repoUrl);
    if (pending === undefined) return null;
    this.spares.delete(repoUrl);
    const spare = await pending;
    if (spare === null) return null;
    if (sealOf(spare.dir) === spare.seal) return spare;
    this.discard(spare.dir);
    return null;
  }

  private lend(clone: Clone, checkout: JobCheckout): TakenClone {
    let given = false;
    return {
      checkout,
      release: (ok) => {
        if (given) return;
        given = true;
        // A job that ended before its fetch did (a fenced hand-out): the clone is judged once git is done there.
        this.spawn(Promise.resolve(checkout.fetched).then(
          () => this.settle(clone, checkout, ok),
          () => this.settle(clone, checkout, false),
        ));
      },
    };
  }

  private settle(clone: Clone, checkout: JobCheckout, ok: boolean): void {
    // The run branch as this job left it on the remote is what its run worktree holds (a merge moves
    // both; a conflict or no merge leaves both): checked below before the clone is kept.
    const runHead = checkout.remoteRefs.get(`acia/${clone.runId ?? ''}`);
    // The next job of a run this worker holds no clone of takes a spare: one is made now, off the job's path.
    this.prepare(clone.repoUrl, clone.base);
    if (!ok || this.closed || runHead === undefined || clone.runId === null) return this.discard(clone.dir);
    this.spawn(this.putBack({ ...clone, runHead }, clone.runId));
  }

  /**
   * After a job: every worktree of the run goes (a task job's workspace checks the run branch out only on
   * demand, so the next job starts with none either), and the clone is kept as sealed.
   */
  private async putBack(clone: Clone, runId: string): Promise<void> {
    try {
      const worktrees = runWorktreesDir(clone.dir, runId);
      if (checkRealDir(clone.dir, worktrees)) {
        for (const e of readdirSync(worktrees)) await rm(join(worktrees, e), { recursive: true, force: true });
      }
      await this.git.run(clone.dir, ['worktree', 'prune']);
      const seal = sealOf(clone.dir);
      if (seal === UNSEALED || this.closed) return this.discard(clone.dir);
      this.idle.push({ ...clone, seal, idleSince: Date.now() });
      this.sweep(new Set());
    } catch (e) {
      this.o.log(`task clone ${clone.dir}: not kept: ${errorMessage(e)}`);
      this.discard(clone.dir);
    }
  }

  /** In the background: a spare clone of `repoUrl` at `base`, unless one is there or under way. */
  prepare(repoUrl: string, base: string): void {
    if (this.closed || this.spares.has(repoUrl)) return;
    if (this.spares.size >= MAX_SPARES) {
      const [oldest] = this.spares.keys();
      if (oldest !== undefined) {
        void this.spares.get(oldest)?.then((s) => s && this.discard(s.dir));
        this.spares.delete(oldest);
      }
    }
    const dir = join(this.root, randomUUID());
    const made = (async (): Promise<Clone | null> => {
      try {
        await cloneAt(this.git, { ...this.o, repoUrl, base, dir });
        // The checkout also asks git once for the clone's drivers, which the job's git calls then reuse.
        await detachAt(this.git, dir, base);
        // The clone guard now, off any job's path: a job that takes this spare at this base need not run it.
        // A repository it refuses still makes a spare; the job that takes it runs the guard and is refused.
        const guarded = await guardAciaState(await realpath(dir)).then(
          () => true,
          () => false,
        );
        const seal = sealOf(dir);
        if (this.closed || seal === UNSEALED) throw new Error('not kept');
        // A run names its base as submitted (a branch, say), its task jobs by the commit it resolved to: the
        // spare is known by the commit (a detached HEAD's file holds it).
        const head = readFileSync(join(dir, '.git', 'HEAD'), 'utf8').trim();
        return { dir, repoUrl, base: /^[0-9a-f]{40}$/.test(head) ? head : base, runId: null, seal, runHead: '', idleSince: Date.now(), guarded };
      } catch {
        this.discard(dir);
        return null;
      }
    })();
    this.spares.set(repoUrl, made);
    this.spawn(made);
  }

  private discard(dir: string): void {
    this.spawn(rm(dir, { recursive: true, force: true }).catch(() => undefined));
  }

  private spawn(work: Promise<unknown>): void {
    const held = work.catch(() => undefined);
    this.background.add(held);
    void held.then(() => this.background.delete(held));
  }
}

const REDIRECTS = ['commondir', join('info', 'grafts'), join('refs', 'replace')];

/**
 * What in a clone decides where git goes and which objects it sees: its config (remote URL, anything a
 * command run outside the sandbox could have planted) and its alternates. A clone is reused only if both
 * are as the worker left them, and `.git` is still a directory of its own.
 */
function sealOf(dir: string): string {
  try {
    const dotGit = join(dir, '.git');
    if (!lstatSync(dotGit).isDirectory() || !lstatSync(join(dotGit, 'config')).isFile()) return UNSEALED;
    // What would send git elsewhere or show it other history, which the worker never writes: a commondir
    // (config, refs and objects of another repository), grafts, replace refs.
    if (REDIRECTS.some((p) => lstatSync(join(dotGit, p), { throwIfNoEntry: false }) !== undefined)) return UNSEALED;
    return [readFileSync(join(dotGit, 'config'), 'utf8'), readFileSync(join(dotGit, 'objects', 'info', 'alternates'), 'utf8')].join('\0');
  } catch {
    return UNSEALED;
  }
}
