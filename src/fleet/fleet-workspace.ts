// The git side of a fleet run: the team's Workspace, plus the remote. Every checkpoint is pushed to its
// task branch and every merge to the run branch as it happens, so a run or task resumed elsewhere
// starts from what was pushed. Two guards keep a worker that lost its lease from moving a branch:
// the lease is checked before each push, and each push is `--force-with-lease` against what this
// worker last saw on the remote, so a branch another worker moved is never overwritten. Merges into
// the run branch happen under a per-run database lock, after fetching the branch: the run's tasks
// may finish on different machines at once.
import { ensureRealDir } from '../core/contain/no-follow.js';
import { fencedError } from '../core/ledger/pg-lease.js';
import type { Git } from '../team/git.js';
import { Workspace, type TaskWorktree } from '../team/workspace.js';
import { pushWithRetry, remoteGit } from './remote-git.js';

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
   * A task job's workspace: opening the run in a clone made or kept for it returns once the run head is
   * known, the run worktree's checkout still under way (the task worktree is made beside it); merges,
   * resets and the close wait for it.
   */
  runWorktreeBehind?: boolean;
  /** Set while the job's clone is as checkoutJob made it: cleared by the first open of the run. */
  fresh?: { open: boolean };
  /** The clone was kept from an earlier task job of the run: its run worktree is there, clean at `runHead`. */
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
  /** The run worktree's checkout or reset, when openRun left it running (runWorktreeBehind). */
  private runReady: Promise<void> = Promise.resolve();

  constructor(
    private readonly g: Git,
    repo: string,
    runId: string,
    private readonly o: FleetWorkspaceOptions,
  ) {
    super(g, repo, runId);
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

  override async merge(taskId: string): Promise<{ commit: string | null; conflict: boolean; files: string[]; hunks?: string }> {
    // Outside the run lock: no other worker's merge waits on this worktree's checkout.
    await this.runReady;
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
    await this.runReady;
    await this.o.withRunLock(async () => {
      await super.resetRun(commit);
      await this.push(this.runBranch);
    });
  }

  override async openRun(base: string, create: boolean): Promise<void> {
    const fresh = this.o.fresh?.open === true;
    if (this.o.fresh) this.o.fresh.open = false;
    await this.o.fetched;
    const remoteHead = this.o.remoteRefs.get(this.runBranch);
    const kept = this.o.kept;
    if (!create && (fresh || kept) && remoteHead) {
      // Real directories all the way, as for any run: a link there would put the worktrees elsewhere.
      ensureRealDir(this.repo, this.root());
      // A task job in a clone this worker kept from the run's earlier task job: the run worktree is there,
      // clean at the head that job left (checked when the clone was put back); the fetch just moved the
      // run branch, so the worktree follows it, unless nothing was merged since.
      // A resumed run (or a task job) in a fresh clone: nothing there can be stale (no worktree to prune, no
      // merge half done), and its fetch set the run branch where the remote has it. Adding its worktree is
      // all it takes: no prune, no reset, nothing to push.
      const ready = kept
        ? kept.runHead === remoteHead
          ? Promise.resolve()
          : this.g.resetHard(this.runWorktree, remoteHead)
        : this.g.run(this.repo, ['worktree', 'add', '--force', this.runWorktree, this.runBranch]).then(() => undefined);
      this.knowRunHead(remoteHead);
      this.runReady = ready;
      if (this.o.runWorktreeBehind) ready.catch(() => undefined);
      else await ready;
      return;
    }
    await super.openRun(base, create);
    const head = await this.runHead();
    if (head !== remoteHead) await this.push(this.runBranch, head);
  }

  /** The orchestrator, after a task ran elsewhere: the run worktree at the run branch the remote has. */
  async syncRunBranch(): Promise<void> {
    await this.runReady;
    return this.o.withRunLock(() => this.pullRunBranch());
  }

  /** Resolves once the run worktree is checked out (a task job's open returns before: runWorktreeBehind). */
  override runWorktreeReady(): Promise<void> {
    return this.runReady;
  }

  override async changedSinceBase(base: string): Promise<string[]> {
    await this.runReady;
    return super.changedSinceBase(base);
  }

  override async close(): Promise<void> {
    // Its checkout must have ended before the worktrees go, however it went.
    await this.runReady.catch(() => undefined);
    return super.close();
  }

  /** Brings the run worktree to the run branch as the remote has it (other workers' merges); under the run lock. */
  private async pullRunBranch(): Promise<void> {
    const ref = `refs/remotes/origin/${this.runBranch}`;
    await remoteGit(this.repo, ['fetch', '-q', 'origin', `+refs/heads/${this.runBranch}:${ref}`]);
    const remote = (await this.g.run(this.repo, ['rev-parse', '--verify', `${ref}^{commit}`])).stdout.trim();
    this.o.remoteRefs.set(this.runBranch, remote);
    if ((await this.runHead()) !== remote) await super.resetRun(remote);
  }

  /**
   * Pushes `branch`, which the caller just set to `known` when it says so (saves asking git). A branch moved
   * on the remote by someone else is proof of a takeover, unless `movedIsFenced` is false (the caller did
   * not fetch it first): then MovedOnRemote is thrown, once the fence is checked again.
   */
  private async push(branch: string, known?: string, movedIsFenced = true): Promise<void> {
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
