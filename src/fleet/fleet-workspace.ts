// The git side of a fleet run: the team's Workspace, plus the remote. Every checkpoint is pushed to its
// task branch and every merge to the run branch as it happens, so a run or task resumed elsewhere
// starts from what was pushed. Two guards keep a worker that lost its lease from moving a branch:
// the lease is checked before each push, and each push is `--force-with-lease` against what this
// worker last saw on the remote, so a branch another worker moved is never overwritten. Merges into
// the run branch happen under a per-run database lock, after fetching the branch: the run's tasks
// may finish on different machines at once.
import { join } from 'node:path';
import { ensureRealDir } from '../core/contain/no-follow.js';
import { fencedError } from '../core/ledger/pg-lease.js';
import type { Git } from '../team/git.js';
import { Workspace, type TaskWorktree } from '../team/workspace.js';
import { pushWithRetry, remoteGit } from './remote-git.js';
import { mergeWithoutWorktree } from './tree-merge.js';

export interface FleetWorkspaceOptions {
  /** Throws LEDGER_FENCED when this worker's lease (or task token) is no longer current. */
  checkFence: () => Promise<void>;
  /** Runs `fn` holding the run's git lock (one merge into the run branch at a time, fleet-wide). */
  withRunLock: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Where the run's branches stood on the remote when this worker fetched them ('' = absent). */
  remoteRefs: Map<string, string>;
  /** Settles when the fetch that fills `remoteRefs` is done: the run is opened only then. */
  fetched?: Promise<void>;
  /**
   * A task job's workspace: opening the run in a clone made or kept for it checks nothing out (the run head
   * is known from the fetch). Its merge is made from objects (tree-merge.ts); the run worktree is checked
   * out only when something needs it: a merge that conflicts, MCP servers, a reset.
   */
  runWorktreeOnDemand?: boolean;
  /**
   * A task worktree the job began at hand-over (from the run head its orchestrator named, once the clone
   * guard passed), before the fetch: a fresh attempt of `taskId` takes it (`made`: whether it was made).
   * Opening the run then returns at once; what needs the run head or the fetched refs waits for them.
   */
  early?: { taskId: string; base: string; made: Promise<boolean> };
  /** Set while the job's clone is as checkoutJob made it: cleared by the first open of the run. */
  fresh?: { open: boolean };
  /** The clone was kept from an earlier task job of the run (with no worktree left in it). */
  kept?: { runHead: string };
  /**
   * Where the last push of the run branch left it, as the pushing worker recorded it (the database): read
   * under the run lock, written after each push of the run branch. A hint, never trusted to publish.
   */
  pushedRunHead?: { read(): Promise<string | null>; write(head: string): Promise<void> };
}

/** A push refused because the branch moved on the remote, while this worker still holds its fence. */
class MovedOnRemote extends Error {}

export class FleetWorkspace extends Workspace {
  /** The run worktree's checkout: null while a task job's workspace has none (runWorktreeOnDemand). */
  private runReady: Promise<void> | null;
  /** The run's open, when it was left to finish behind (an early task worktree needs none of it). */
  private opening: Promise<void> | null = null;
  /** Whether the early task worktree was taken (or passed over) by the attempt. */
  private earlyTaken = false;

  constructor(
    private readonly g: Git,
    repo: string,
    runId: string,
    private readonly o: FleetWorkspaceOptions,
  ) {
    super(g, repo, runId);
    this.runReady = o.runWorktreeOnDemand ? null : Promise.resolve();
  }

  override async checkpoint(taskId: string, wt: TaskWorktree, message: string): Promise<{ commit: string | null; files: string[] }> {
    const r = await super.checkpoint(taskId, wt, message);
    if (r.commit) await this.push(wt.branch, r.commit);
    return r;
  }

  /** A dev.merge task's resolution is its checkpoint: pushed like one. */
  override async commitMerge(taskId: string, wt: TaskWorktree, message: string): Promise<{ commit: string; files: string[] }> {
    const r = await super.commitMerge(taskId, wt, message);
    await this.push(wt.branch, r.commit);
    return r;
  }

  override merge(taskId: string): Promise<{ commit: string | null; conflict: boolean; files: string[]; hunks?: string }> {
    return this.o.withRunLock(async () => {
      // When the last push of the run branch (recorded beside the lock) left it where this clone already
      // has it, fetching it again would change nothing. If the record was behind, the push below is refused
      // (it leases on what this clone saw): the branch is then fetched and the task merged again on top.
      const recorded = await this.o.pushedRunHead?.read().catch(() => null);
      const known = this.o.remoteRefs.get(this.runBranch);
      const trusted = recorded != null && recorded === known && (await this.runHead()) === known;
      if (!trusted) await this.pullRunBranch();
      try {
        return await this.mergeAndPush(taskId, !trusted);
      } catch (e) {
        if (!(e instanceof MovedOnRemote)) throw e;
        await this.pullRunBranch();
        return await this.mergeAndPush(taskId, true);
      }
    });
  }

  private async mergeAndPush(taskId: string, movedIsFenced: boolean): Promise<{ commit: string | null; conflict: boolean; files: string[]; hunks?: string }> {
    const r = await super.merge(taskId);
    if (r.commit && r.commit !== this.o.remoteRefs.get(this.runBranch)) await this.push(this.runBranch, r.commit, movedIsFenced);
    return r;
  }

  override async resetRun(commit: string): Promise<void> {
    await this.runWorktreeReady();
    await this.o.withRunLock(async () => {
      await super.resetRun(commit);
      await this.push(this.runBranch);
    });
  }

  override async openRun(base: string, create: boolean): Promise<void> {
    if (this.o.early === undefined || create) return this.openNow(base, create);
    this.opening = this.openNow(base, create);
    // Awaited by whatever needs the run head (runHead), the refs (push) or the run worktree.
    this.opening.catch(() => undefined);
  }

  override async runHead(): Promise<string> {
    if (this.opening) await this.opening;
    return super.runHead();
  }

  protected override async startOf(taskId: string): Promise<string> {
    const early = this.o.early;
    if (early && !this.earlyTaken && early.taskId === taskId && (await early.made)) return early.base;
    return super.startOf(taskId);
  }

  protected override async addTaskWorktree(path: string, branch: string, base: string): Promise<void> {
    const early = this.o.early;
    if (early && !this.earlyTaken && path === join(this.root(), early.taskId)) {
      this.earlyTaken = true;
      // Made at hand-over from the same start: it is this attempt's. Otherwise (it failed, or the attempt
      // starts elsewhere) it is replaced like any worktree left at that path.
      if ((await early.made) && base === early.base) return;
    }
    return super.addTaskWorktree(path, branch, base);
  }

  private async openNow(base: string, create: boolean): Promise<void> {
    const fresh = this.o.fresh?.open === true;
    if (this.o.fresh) this.o.fresh.open = false;
    await this.o.fetched;
    const remoteHead = this.o.remoteRefs.get(this.runBranch);
    const kept = this.o.kept;
    if (!create && (fresh || kept) && remoteHead) {
      // Real directories all the way, as for any run: a link there would put the worktrees elsewhere.
      ensureRealDir(this.repo, this.root());
      this.knowRunHead(remoteHead);
      // A task job (in a fresh clone or one kept from the run's earlier task job, which comes back with no
      // worktree): nothing is checked out now; its task worktree is made from the run head directly.
      if (this.o.runWorktreeOnDemand) {
        this.runReady = null;
        return;
      }
      // A resumed run in a fresh clone: nothing there can be stale (no worktree to prune, no merge half
      // done), and its fetch set the run branch where the remote has it. Adding its worktree is all it
      // takes: no prune, no reset, nothing to push.
      await this.g.run(this.repo, ['worktree', 'add', '--force', this.runWorktree, this.runBranch]);
      return;
    }
    await super.openRun(base, create);
    this.runReady = Promise.resolve();
    const head = await super.runHead();
    if (head !== remoteHead) await this.push(this.runBranch, head);
  }

  /** The orchestrator, after a task ran elsewhere: the run worktree at the run branch the remote has. */
  syncRunBranch(): Promise<void> {
    return this.o.withRunLock(() => this.pullRunBranch());
  }

  /** The run worktree, checked out now if a task job's workspace has none yet (runWorktreeOnDemand). */
  override async runWorktreeReady(): Promise<void> {
    if (this.opening) await this.opening;
    if (this.runReady === null) {
      this.runReady = this.g.run(this.repo, ['worktree', 'add', '--force', this.runWorktree, this.runBranch]).then(() => undefined);
      // Awaited by whoever asked; a failure must not go unhandled meanwhile.
      this.runReady.catch(() => undefined);
    }
    return this.runReady;
  }

  /** Settles once a checkout of the run worktree under way has ended (none is started here). */
  override async idle(): Promise<void> {
    await Promise.allSettled([this.opening, this.runReady, this.o.early?.made]);
  }

  /** A task job with no run worktree merges from objects; a conflict (or a git too old for that) in the worktree, as ever. */
  protected override async mergeInto(branch: string, message: string, head: string): Promise<{ commit: string | null; conflict: boolean; files: string[]; hunks?: string }> {
    if (this.runReady === null) {
      const merged = await mergeWithoutWorktree(this.g, this.repo, { into: this.runBranch, head, branch, message, reader: this.objects });
      if (merged !== null) return { ...merged, conflict: false };
      await this.runWorktreeReady();
    }
    return super.mergeInto(branch, message, head);
  }

  override async changedSinceBase(base: string): Promise<string[]> {
    await this.runWorktreeReady();
    return super.changedSinceBase(base);
  }

  override async close(): Promise<void> {
    // Its checkout must have ended before the worktrees go, however it went.
    await this.idle();
    return super.close();
  }

  /** Brings the run worktree to the run branch as the remote has it (other workers' merges); under the run lock. */
  private async pullRunBranch(): Promise<void> {
    const ref = `refs/remotes/origin/${this.runBranch}`;
    await remoteGit(this.repo, ['fetch', '-q', 'origin', `+refs/heads/${this.runBranch}:${ref}`]);
    const remote = (await this.g.run(this.repo, ['rev-parse', '--verify', `${ref}^{commit}`])).stdout.trim();
    this.o.remoteRefs.set(this.runBranch, remote);
    if ((await this.runHead()) === remote) return;
    if (this.runReady !== null) return super.resetRun(remote);
    // No run worktree: the branch is all there is to move.
    await this.g.run(this.repo, ['update-ref', `refs/heads/${this.runBranch}`, remote]);
    this.knowRunHead(remote);
  }

  /**
   * Pushes `branch`, which the caller just set to `known` when it says so (saves asking git). A branch moved
   * on the remote by someone else is proof of a takeover, unless `movedIsFenced` is false (the caller did
   * not fetch it first): then MovedOnRemote is thrown, once the fence is checked again.
   */
  private async push(branch: string, known?: string, movedIsFenced = true): Promise<void> {
    // The refs it leases on are the fetch's (a task job may start its agent before the fetch is done).
    await this.o.fetched;
    // Before every push, whatever else was checked before: a worker fenced meanwhile pushes nothing.
    await this.o.checkFence();
    const sha = known ?? (await this.g.run(this.repo, ['rev-parse', '--verify', `refs/heads/${branch}^{commit}`])).stdout.trim();
    const expected = this.o.remoteRefs.get(branch) ?? '';
    await pushWithRetry(branch, async () => {
      const r = await remoteGit(this.repo, ['push', '-q', 'origin', `--force-with-lease=refs/heads/${branch}:${expected}`, `refs/heads/${branch}:refs/heads/${branch}`], { allowFail: true });
      // The branch moved on the remote since this worker saw it: another worker owns it now (no retry).
      if (r.exitCode !== 0 && /stale info|\(fetch first\)|rejected/.test(r.stderr)) {
        await this.o.checkFence();
        if (/stale info/.test(r.stderr)) throw movedIsFenced ? fencedError(this.runId, `${branch} was moved on the remote by another worker`) : new MovedOnRemote(branch);
      }
      return r;
    });
    this.o.remoteRefs.set(branch, sha);
    if (branch === this.runBranch) await this.o.pushedRunHead?.write(sha).catch(() => undefined);
  }
}
