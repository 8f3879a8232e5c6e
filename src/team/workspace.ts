// Per-task git worktrees under .acia/worktrees/<run>/, each on branch acia-tasks/<run>/<task>, and the
// run branch acia/<run> they merge into. The user's checkout is never touched.
import { AciaError } from '../core/errors.js';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { ensureRealDir } from '../core/contain/no-follow.js';
import { removeRunWorktrees as removeWorktreeDir, runWorktreesDir } from '../core/contain/acia-state.js';
import { join } from 'node:path';
import { dependencyDirsCached, linkDependencies } from '../core/sandbox/deps.js';
import { GitBatchReader } from '../core/sandbox/git-batch.js';
import type { CheckpointObjects } from './checkpoint.js';
import type { Git } from './git.js';
import { changedPaths, objectsDirOf } from './git-objects.js';

export interface TaskWorktree {
  path: string;
  branch: string;
  baseCommit: string;
}

/** What the team does to git. The live one uses worktrees; replay serves recorded outcomes. */
export interface RunWorkspace {
  readonly runBranch: string;
  readonly runWorktree: string;
  openRun(base: string, create: boolean): Promise<void>;
  /**
   * Resolves once the run worktree is checked out. A workspace may open the run without it (a fleet task
   * job's: its run head is known, task worktrees can be made, merges need none): asking checks it out.
   */
  runWorktreeReady?(): Promise<void>;
  /** Settles once git work on the run worktree the workspace started by itself has ended (starts none). */
  idle?(): Promise<void>;
  runHead(): Promise<string>;
  prepareTask(taskId: string, checkpoint: string | null): Promise<TaskWorktree>;
  /**
   * Starts the task's worktree before the attempt asks for it (a fleet task job, while the run's context is
   * read back): the attempt's prepareTask with the same checkpoint takes it; settles when it is made.
   */
  prepareAhead?(taskId: string, checkpoint: string | null): Promise<void>;
  /** Commits the attempt; null commit when nothing changed. */
  checkpoint(taskId: string, wt: TaskWorktree, message: string): Promise<{ commit: string | null; files: string[] }>;
  /** On a conflict, `hunks` holds the conflicted files' hunks as git left them. */
  merge(taskId: string): Promise<{ commit: string | null; conflict: boolean; files: string[]; hunks?: string }>;
  resetRun(commit: string): Promise<void>;
  /** Starts merging `branch` into a task worktree, conflicts left in place; returns the conflicted files. */
  beginMerge(wt: TaskWorktree, branch: string): Promise<string[]>;
  /** Commits the merge begun in `wt`; returns the merge commit and the files it changes against the worktree's base. */
  commitMerge(taskId: string, wt: TaskWorktree, message: string): Promise<{ commit: string; files: string[] }>;
  /**
   * What the setup command just left untracked in the worktree (a build's output): later checkpoints of
   * that worktree leave it out. Optional: replay has nothing to keep out.
   */
  keepOutOfCheckpoints?(wt: TaskWorktree): Promise<string[]>;
  changedSinceBase(base: string): Promise<string[]>;
  /** Lines added plus removed between two commits (best-of-N prefers the smaller change). */
  diffSize(from: string, to: string): Promise<number>;
  /** Makes a task worktree's files those of `commit` (another candidate's work), uncommitted. */
  adopt(wt: TaskWorktree, commit: string): Promise<void>;
  close(): Promise<void>;
}

/** A task's branch (see Workspace.taskBranch). */
export function taskBranchOf(runId: string, taskId: string): string {
  return `acia-tasks/${runId}/${taskId}`;
}

export class Workspace implements RunWorkspace {
  private mergeChain: Promise<unknown> = Promise.resolve();
  /** Worktree changes that prune (run one at a time, never during an add). */
  private worktreeChain: Promise<unknown> = Promise.resolve();
  /** Fresh worktree adds under way (they may run together). */
  private readonly adding = new Set<Promise<unknown>>();
  /** Each task worktree's git dir, read when ACIA created it, checked before ACIA runs git there again. */
  private readonly gitDirs = new Map<string, string>();
  /** Task worktrees prepareAhead started, each taken by the next prepareTask of its task. */
  private readonly ahead = new Map<string, { checkpoint: string | null; made: Promise<TaskWorktree> }>();
  /** The run worktree's HEAD as ACIA last moved it (merge, reset); null when it must be asked. */
  private head: string | null = null;
  /** Per worktree: untracked paths the setup command made, which checkpoints do not commit. */
  private readonly setupOutputs = new Map<string, string[]>();
  /** The run's one `git cat-file --batch` in the repository: heads, trees and diffs without a process each. */
  private readonly reader: GitBatchReader;
  /** The run's object reader, for what else reads the repository's objects during the run (the PM's context). */
  get objects(): GitBatchReader {
    return this.reader;
  }
  /** Task branches checkpointed in this session and not merged since: they cannot be merged already. */
  private readonly unmerged = new Set<string>();
  readonly runBranch: string;
  readonly runWorktree: string;

  constructor(
    private readonly git: Git,
    readonly repo: string,
    readonly runId: string,
    /** Lays the checkout's installed dependencies out in a fresh worktree the way its commands will see them. */
    private readonly layDependencies: (worktree: string) => void = (wt) => void linkDependencies(repo, wt, dependencyDirsCached(repo)),
  ) {
    this.runBranch = `acia/${runId}`;
    this.runWorktree = join(this.root(), '@run');
    this.reader = new GitBatchReader(repo);
  }

  root(): string {
    return runWorktreesDir(this.repo, this.runId);
  }

  /**
   * Task branches cannot live under acia/<run>/ next to the run branch acia/<run>: git stores refs as
   * paths, and one cannot be both a file and a directory. They live under acia-tasks/<run>/ instead.
   */
  taskBranch(taskId: string): string {
    return taskBranchOf(this.runId, taskId);
  }

  /** Creates the run branch at `base` (first start) and its worktree (every start). */
  async openRun(base: string, create: boolean): Promise<void> {
    this.head = null;
    // Real directories all the way: a `.acia/worktrees` link from a clone would put worktrees elsewhere.
    ensureRealDir(this.repo, this.root());
    // A new run's branch and worktree path are new (its id is); a resumed run's may be gone or stale.
    if (create || !(await this.git.branchExists(this.repo, this.runBranch))) await this.git.run(this.repo, ['branch', '-f', this.runBranch, base]);
    if (!create) await this.git.run(this.repo, ['worktree', 'prune']);
    // A resumed run's worktree may still be there (git then refuses the add, and it is used as it is);
    // any other failure is git's own, said in its words rather than as a missing directory later on.
    // A resume holds the run's ledger lock, so an entry of its worktree still locked "initializing" was left
    // by a git killed while adding it (prune keeps locked entries): the second --force adds over it.
    const force = create ? ['--force'] : ['--force', '--force'];
    const added = await this.git.run(this.repo, ['worktree', 'add', ...force, this.runWorktree, this.runBranch], { allowFail: true });
    if (added.exitCode !== 0 && !existsSync(join(this.runWorktree, '.git'))) {
      throw new AciaError('INTERNAL', `git worktree add failed for the run worktree ${this.runWorktree}: ${added.stderr.split('\n').filter((l) => l.trim() !== '').at(-1) ?? `exit ${added.exitCode}`}`);
    }
    if (!create) await this.recoverRunWorktree();
  }

  /**
   * After a crash the run worktree may hold a half-done merge or a stale index.lock from a killed git.
   * The run branch's commits are the truth: drop anything uncommitted there.
   */
  private async recoverRunWorktree(): Promise<void> {
    const gitDir = await this.git.gitDirOf(this.runWorktree);
    await rm(join(gitDir, 'index.lock'), { force: true });
    // A lock a killed add left would make the run's clean-up refuse to remove the worktree.
    await rm(join(gitDir, 'locked'), { force: true });
    await this.git.run(this.runWorktree, ['merge', '--abort'], { allowFail: true });
    await this.git.run(this.runWorktree, ['reset', '-q', '--hard', this.runBranch]);
  }

  /** openRun here returns with the run worktree checked out. */
  runWorktreeReady(): Promise<void> {
    return Promise.resolve();
  }

  idle(): Promise<void> {
    return Promise.resolve();
  }

  /** A subclass that brought the run worktree to `head` itself (a fleet clone it prepared): no need to ask git. */
  protected knowRunHead(head: string): void {
    this.head = head;
  }

  /** Only ACIA moves the run worktree's HEAD (agents work in task worktrees), so it is asked once and then kept. */
  async runHead(): Promise<string> {
    this.head ??= await this.git.head(this.runWorktree);
    return this.head;
  }

  /**
   * A task's worktree: fresh from the run head, or (resume, retry) the task branch reset to its last
   * recorded checkpoint so an interrupted attempt restarts from known state.
   */
  async prepareTask(taskId: string, checkpoint: string | null): Promise<TaskWorktree> {
    const early = this.ahead.get(taskId);
    if (early !== undefined) {
      this.ahead.delete(taskId);
      // Made from the same checkpoint, or the same run head (only a merge moves it, and none ran since).
      const wt = await early.made.catch(() => null);
      if (wt !== null && early.checkpoint === checkpoint) return wt;
      // Otherwise (it failed, or another checkpoint is asked for) made again below, the old one replaced.
    }
    const path = join(this.root(), taskId);
    const branch = this.taskBranch(taskId);
    const base = checkpoint ?? (await this.startOf(taskId));
    // addWorktree removes any old worktree at `path` and checks `branch` out fresh at `base`, so a
    // restarted attempt starts from exactly that commit with nothing left over. Its `worktree prune` must
    // not run while a parallel task's `worktree add` is half done (git then fails with "failed to read
    // .git/worktrees/<task>/commondir"): a remove-and-prune waits for every add under way and holds the
    // next ones back. A first attempt's path needs no prune, and adds of distinct paths and branches may
    // run at once (best-of-N prepares its candidates' worktrees together).
    let added: Promise<void>;
    if (existsSync(path)) {
      const under = [...this.adding];
      added = this.worktreeChain.then(() => Promise.allSettled(under)).then(() => this.addTaskWorktree(path, branch, base));
      this.worktreeChain = added.catch(() => undefined);
    } else {
      added = this.worktreeChain.then(() => this.addTaskWorktree(path, branch, base));
      const settled = added.catch(() => undefined);
      this.adding.add(settled);
      void settled.then(() => this.adding.delete(settled));
    }
    await added;
    this.gitDirs.set(path, await this.git.gitDirOf(path));
    this.setupOutputs.delete(path);
    // The checkout's installed dependencies, as the sandbox (or the host) shows them (core/sandbox/deps.ts).
    this.layDependencies(path);
    return { path, branch, baseCommit: base };
  }

  prepareAhead(taskId: string, checkpoint: string | null): Promise<void> {
    const made = this.prepareTask(taskId, checkpoint);
    this.ahead.set(taskId, { checkpoint, made });
    return made.then(
      () => undefined,
      () => undefined,
    );
  }

  async checkpoint(_taskId: string, wt: TaskWorktree, message: string): Promise<{ commit: string | null; files: string[] }> {
    const gitDir = this.gitDirs.get(wt.path);
    const objects: CheckpointObjects | undefined = gitDir === undefined ? undefined : { reader: this.reader, objectsDir: objectsDirOf(gitDir) };
    const commit = await this.git.commitAll(wt.path, message, gitDir, this.setupOutputs.get(wt.path) ?? [], objects);
    if (commit === null) return { commit, files: [] };
    this.unmerged.add(wt.branch);
    return { commit, files: await changedPaths(this.reader, wt.baseCommit, commit) };
  }

  /** Merges are serialised: two tasks finishing together must not race on the run branch. */
  merge(taskId: string): Promise<{ commit: string | null; conflict: boolean; files: string[]; hunks?: string }> {
    const next = this.mergeChain.then(async () => {
      const branch = this.taskBranch(taskId);
      const head = await this.runHead();
      // Already merged (a crash after the merge, before it was recorded): report it, do not merge twice.
      // A branch this session checkpointed and has not merged since cannot be; only others are asked.
      if (!this.unmerged.has(branch) && (await this.git.isAncestor(this.repo, `refs/heads/${branch}`, head))) return { commit: head, conflict: false, files: [] as string[] };
      const merged = await this.mergeInto(branch, `acia: merge ${taskId}`, head);
      // A conflict is aborted, so HEAD stays where it was.
      if (merged.commit !== null) {
        this.head = merged.commit;
        this.unmerged.delete(branch);
      }
      return merged;
    });
    this.mergeChain = next.catch(() => undefined);
    return next;
  }

  /** Where a fresh attempt of a task starts: the run head. */
  protected startOf(_taskId: string): Promise<string> {
    return this.runHead();
  }

  /** Checks `branch` out at `base` in a task worktree at `path` (anything there before is replaced). */
  protected addTaskWorktree(path: string, branch: string, base: string): Promise<void> {
    return this.git.addWorktree(this.repo, path, branch, base);
  }

  /** Merges `branch` into the run branch at `head` (serialised by merge): here, in the run worktree. */
  protected mergeInto(branch: string, message: string, head: string): Promise<{ commit: string | null; conflict: boolean; files: string[]; hunks?: string }> {
    return this.git.merge(this.runWorktree, branch, message, head, this.reader, this.runBranch);
  }

  async keepOutOfCheckpoints(wt: TaskWorktree): Promise<string[]> {
    const paths = await this.git.untracked(wt.path, this.gitDirs.get(wt.path));
    this.setupOutputs.set(wt.path, paths);
    return paths;
  }

  async resetRun(commit: string): Promise<void> {
    this.head = null;
    await this.git.resetHard(this.runWorktree, commit);
  }

  async beginMerge(wt: TaskWorktree, branch: string): Promise<string[]> {
    return this.git.startMerge(wt.path, branch, this.gitDirOfTask(wt));
  }

  async commitMerge(_taskId: string, wt: TaskWorktree, message: string): Promise<{ commit: string; files: string[] }> {
    const gitDir = this.gitDirOfTask(wt);
    const commit = await this.git.commitMerge(wt.path, message, gitDir);
    return { commit, files: await this.git.changedFiles(wt.path, wt.baseCommit, commit, gitDir) };
  }

  private gitDirOfTask(wt: TaskWorktree): string {
    const gitDir = this.gitDirs.get(wt.path);
    if (gitDir === undefined) throw new Error(`no worktree prepared at ${wt.path}`);
    return gitDir;
  }

  async changedSinceBase(base: string): Promise<string[]> {
    return this.git.changedFiles(this.runWorktree, base);
  }

  async diffSize(from: string, to: string): Promise<number> {
    const r = await this.git.run(this.repo, ['diff', '--numstat', '--no-ext-diff', '--no-textconv', '--no-renames', from, to]);
    let lines = 0;
    for (const row of r.stdout.split('\n')) {
      const [added, removed] = row.split('\t');
      // Binary files show as "-": count each as one line changed.
      if (added !== undefined && removed !== undefined) lines += (Number(added) || 1) + (Number(removed) || 0);
    }
    return lines;
  }

  async adopt(wt: TaskWorktree, commit: string): Promise<void> {
    await this.git.run(wt.path, ['read-tree', '-u', '--reset', commit], { expectedGitDir: this.gitDirs.get(wt.path) ?? (await this.git.gitDirOf(wt.path)) });
  }

  /**
   * Removes the run's worktrees when a session ends: the run branch can then be checked out in the
   * user's repo, and nothing stale is left. Branches stay; the next session recreates what it needs.
   */
  async close(): Promise<void> {
    this.reader.close();
    await removeRunWorktrees(this.git, this.repo, this.runId);
  }
}

/**
 * Removes every git worktree of a run and its directory: the directory goes first (through the containment
 * module, which refuses a `.acia/worktrees` that leads out of the repository), then one `worktree prune`
 * drops the registrations whose directories are gone (one git process, not one `worktree remove` per task).
 */
export async function removeRunWorktrees(git: Git, repo: string, runId: string): Promise<void> {
  await removeWorktreeDir(repo, runId);
  await git.run(repo, ['worktree', 'prune'], { allowFail: true });
}

/**
 * The local git side of a run: worktrees under .acia/worktrees, each laid out with the checkout's
 * installed dependencies by the runner that will run its commands (a sandbox's view, or the host's).
 */
export function localWorkspace(git: Git, runnerFor: (root: string) => { layDependencies?: (worktree: string) => void }, repo: string, runId: string): Workspace {
  return new Workspace(git, repo, runId, (wt) => {
    const runner = runnerFor(wt);
    if (runner.layDependencies) runner.layDependencies(wt);
    else linkDependencies(repo, wt, dependencyDirsCached(repo));
  });
}
