// The git operations the team performs on worktrees an agent has written to. Every call disables
// hooks, fsmonitor, external diff and textconv, and ignores system config, so nothing an agent wrote
// can make ACIA run code outside the sandbox.
import { existsSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { DEPENDENCY_EXCLUDES, excludePathspecs } from '../core/sandbox/deps.js';
import { safeGit } from '../core/sandbox/safe-git.js';
import { readConflictHunks } from './merge-task.js';
import { checkpointCommit, removeNestedGitEntries, worktreeTree, type CheckpointObjects } from './checkpoint.js';
import { changedPaths } from './git-objects.js';
import type { GitBatchReader } from '../core/sandbox/git-batch.js';
import { AciaError } from '../core/errors.js';
import type { Clock } from '../core/acm/ids.js';

const IDENTITY = {
  GIT_AUTHOR_NAME: 'ACIA',
  GIT_AUTHOR_EMAIL: 'acia@localhost',
  GIT_COMMITTER_NAME: 'ACIA',
  GIT_COMMITTER_EMAIL: 'acia@localhost',
};

export interface GitResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export interface GitRunOptions {
  allowFail?: boolean;
  /** For an agent's worktree: the git dir its `.git` file must still point to. */
  expectedGitDir?: string;
  env?: Record<string, string>;
  input?: string | Uint8Array;
  encoding?: 'utf8' | 'latin1';
}

/** Every call goes through safeGit; commit dates come from the injected clock so runs are reproducible. */
export class Git {
  constructor(private readonly clock: Clock) {}

  /** The injected clock's time: commit dates ACIA writes itself use it too. */
  now(): Date {
    return this.clock.now();
  }

  async run(cwd: string, args: string[], opts: GitRunOptions = {}): Promise<GitResult> {
    const date = this.clock.now().toISOString();
    const r = await safeGit(cwd, args, {
      env: { ...IDENTITY, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date, GIT_TERMINAL_PROMPT: '0', ...opts.env },
      ...(opts.expectedGitDir === undefined ? {} : { expectedGitDir: opts.expectedGitDir }),
      ...(opts.input === undefined ? {} : { input: opts.input }),
      ...(opts.encoding === undefined ? {} : { encoding: opts.encoding }),
    });
    const result = { stdout: r.stdout.trimEnd(), stderr: r.stderr.trimEnd(), exitCode: r.exitCode };
    if (result.exitCode !== 0 && !opts.allowFail) {
      const why = result.stderr.split('\n').filter((l) => l.trim() !== '').at(-1) ?? `exit ${result.exitCode}`;
      throw new AciaError('INTERNAL', `git ${args.slice(0, 2).join(' ')} failed in ${cwd}: ${why}`);
    }
    return result;
  }

  async head(cwd: string): Promise<string> {
    return (await this.run(cwd, ['rev-parse', 'HEAD'])).stdout;
  }

  async currentBranch(cwd: string): Promise<string | null> {
    const r = await this.run(cwd, ['symbolic-ref', '--quiet', '--short', 'HEAD'], { allowFail: true });
    return r.exitCode === 0 ? r.stdout : null;
  }

  async isDirty(cwd: string): Promise<boolean> {
    const r = await this.run(cwd, ['status', '--porcelain', '--untracked-files=normal', '--', '.', ':(exclude).acia']);
    return r.stdout.length > 0;
  }

  async branchExists(cwd: string, branch: string): Promise<boolean> {
    return (await this.run(cwd, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], { allowFail: true })).exitCode === 0;
  }

  /** (Re)creates `branch` at `at` checked out in a worktree at `path`. */
  async addWorktree(repo: string, path: string, branch: string, at: string): Promise<void> {
    // A first attempt has nothing to remove; `add --force` also takes a path still registered to a
    // worktree whose directory is gone, so the remove and prune run only when the directory is there.
    // An old attempt may have left a nested repository there, which `worktree remove` refuses to delete.
    if (existsSync(path)) {
      removeNestedGitEntries(path);
      await this.run(repo, ['worktree', 'remove', '--force', path], { allowFail: true });
      await this.run(repo, ['worktree', 'prune']);
    }
    await this.run(repo, ['worktree', 'add', '--force', '-B', branch, path, at]);
  }

  async removeWorktree(repo: string, path: string): Promise<void> {
    await this.run(repo, ['worktree', 'remove', '--force', path], { allowFail: true });
  }

  /**
   * Commits everything in the worktree except installed dependencies, tool caches and test byproducts
   * (node_modules, .venv, .nyc_output, coverage, __pycache__, ...), whatever the repository's .gitignore
   * says; built with plumbing that applies no filters (see checkpoint.ts). Null when nothing changed.
   */
  async commitAll(cwd: string, message: string, expectedGitDir?: string, alsoExclude: readonly string[] = [], objects?: CheckpointObjects): Promise<string | null> {
    return checkpointCommit(this, cwd, message, expectedGitDir, [...excludePathspecs(), ...alsoExclude.map((p) => `:(exclude,literal)${p}`)], objects);
  }

  /**
   * Stages tracked changes and untracked, unignored files, leaving dependency paths and `alsoExclude` out.
   * Not `add -A` with exclude pathspecs: git fails that whole command when an excluded path that exists is
   * also in .gitignore (a `.venv` or `coverage` most projects ignore), so untracked files are listed
   * first and added by name.
   */
  async stageAll(cwd: string, o: GitRunOptions, alsoExclude: readonly string[] = []): Promise<void> {
    const excludes = [...excludePathspecs(), ...alsoExclude.map((p) => `:(exclude,literal)${p}`)];
    await this.run(cwd, ['add', '-u', '--', '.', ...excludes], o);
    const others = (await this.run(cwd, ['ls-files', '--others', '--exclude-standard', '-z', '--', '.', ...excludes], o)).stdout.split('\0').filter((f) => f !== '');
    if (others.length === 0) return;
    const dir = await mkdtemp(join(tmpdir(), 'acia-stage-'));
    try {
      const list = join(dir, 'paths');
      await writeFile(list, others.join('\0'));
      // Literal pathspecs: a file named `*` or `:(glob)x` is that file, nothing more.
      await this.run(cwd, ['add', '--pathspec-from-file', list, '--pathspec-file-nul'], { ...o, env: { ...o.env, GIT_LITERAL_PATHSPECS: '1' } });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** Untracked paths (directories collapsed, no trailing slash), leaving installed dependencies out. */
  async untracked(cwd: string, expectedGitDir?: string): Promise<string[]> {
    const r = await this.run(cwd, ['status', '--porcelain=v1', '-z', '--untracked-files=normal', '--', '.', ...excludePathspecs()], expectedGitDir === undefined ? {} : { expectedGitDir });
    return r.stdout
      .split('\0')
      .filter((l) => l.startsWith('?? '))
      .map((l) => l.slice(3).replace(/\/$/, ''));
  }

  async changedFiles(cwd: string, from: string, to = 'HEAD', expectedGitDir?: string): Promise<string[]> {
    // -z: names as they are (git would quote non-ASCII ones); --no-renames: a move lists both the path it
    // left and the one it reached, so moving a protected file away is seen as a change to it.
    const r = await this.run(cwd, ['diff', '--name-only', '-z', '--no-renames', '--no-ext-diff', '--no-textconv', from, to], expectedGitDir === undefined ? {} : { expectedGitDir });
    return splitZ(r.stdout);
  }

  /**
   * Merges `branch` into the branch checked out at `cwd`; a conflict is aborted and reported. With `reader`
   * (the run's cat-file) the new head and the changed files are read from objects, not asked of git.
   */
  async merge(cwd: string, branch: string, message: string, head?: string, reader?: GitBatchReader, checkedOut?: string): Promise<{ commit: string | null; conflict: boolean; files: string[]; hunks?: string }> {
    const before = head ?? (await this.head(cwd));
    const r = await this.run(cwd, ['merge', '--no-ff', '--no-edit', '--no-verify', '-m', message, branch], { allowFail: true });
    if (r.exitCode !== 0) {
      const conflicted = await this.run(cwd, ['diff', '--name-only', '-z', '--diff-filter=U'], { allowFail: true });
      const files = splitZ(conflicted.stdout);
      // Read before the abort: the hunks are what a dev.merge task starts from.
      const hunks = await readConflictHunks(cwd, files);
      await this.run(cwd, ['merge', '--abort'], { allowFail: true });
      return { commit: null, conflict: true, files, hunks };
    }
    if (reader !== undefined && checkedOut !== undefined) {
      const after = await reader.read(`refs/heads/${checkedOut}`);
      if (after !== null && after.type === 'commit') return { commit: after.sha, conflict: false, files: await changedPaths(reader, before, after.sha) };
    }
    const commit = await this.head(cwd);
    return { commit, conflict: false, files: await this.changedFiles(cwd, before, commit) };
  }

  /**
   * Starts merging `branch` into the worktree at `cwd` without committing, leaving conflict markers
   * in place for an agent. Returns the conflicted files (none: it merged cleanly, still uncommitted).
   */
  async startMerge(cwd: string, branch: string, expectedGitDir: string): Promise<string[]> {
    const o = { expectedGitDir };
    await this.run(cwd, ['merge', '--no-ff', '--no-commit', '--no-verify', branch], { ...o, allowFail: true });
    const inMerge = await this.run(cwd, ['rev-parse', '-q', '--verify', 'MERGE_HEAD'], { ...o, allowFail: true });
    if (inMerge.exitCode !== 0) throw new AciaError('INTERNAL', `git merge ${branch} did not start in ${cwd}`);
    const conflicted = await this.run(cwd, ['diff', '--name-only', '--diff-filter=U'], o);
    return conflicted.stdout === '' ? [] : conflicted.stdout.split('\n');
  }

  /** Commits a merge started with startMerge (a commit with both parents), whatever the resolution. */
  async commitMerge(cwd: string, message: string, expectedGitDir: string): Promise<string> {
    const o = { expectedGitDir };
    const inMerge = await this.run(cwd, ['rev-parse', '-q', '--verify', 'MERGE_HEAD'], { ...o, allowFail: true });
    if (inMerge.exitCode !== 0) throw new AciaError('INTERNAL', `no merge in progress in ${cwd} (was it committed or aborted inside the task?)`);
    await this.run(cwd, ['add', '-A', '--', '.'], o);
    await this.run(cwd, ['commit', '--no-verify', '-q', '-m', message], o);
    return (await this.run(cwd, ['rev-parse', 'HEAD'], o)).stdout;
  }

  async isAncestor(cwd: string, ancestor: string, of: string): Promise<boolean> {
    return (await this.run(cwd, ['merge-base', '--is-ancestor', ancestor, of], { allowFail: true })).exitCode === 0;
  }

  async resetHard(cwd: string, commit: string, expectedGitDir?: string): Promise<void> {
    const o = expectedGitDir === undefined ? {} : { expectedGitDir };
    await this.run(cwd, ['reset', '-q', '--hard', commit], o);
    await this.run(cwd, ['clean', '-q', '-fdx', '-e', 'node_modules'], o);
  }

  /**
   * Where a worktree's `.git` file points right after ACIA created it (before any agent ran): read from
   * the file, as assertGitPointer reads it later, without a git process.
   */
  async gitDirOf(cwd: string): Promise<string> {
    try {
      const m = /^gitdir:\s*(.+?)\s*$/m.exec(await readFile(join(cwd, '.git'), 'utf8'));
      if (m?.[1]) return await realpath(resolve(cwd, m[1]));
    } catch {
      // Not a linked worktree (a .git directory) or unreadable: ask git.
    }
    return (await this.run(cwd, ['rev-parse', '--absolute-git-dir'])).stdout;
  }
}

/** A NUL-separated name list (`-z`): names may hold spaces, newlines or any non-ASCII byte as they are. */
function splitZ(out: string): string[] {
  return out.split('\0').filter((n) => n !== '');
}

/** Git helpers that read the repository itself (not an agent's worktree). */
export async function repoRoot(git: Git, dir: string): Promise<string> {
  const r = await git.run(dir, ['rev-parse', '--show-toplevel'], { allowFail: true });
  if (r.exitCode !== 0) throw notARepo(dir);
  return r.stdout;
}

export async function requireCommit(git: Git, repo: string): Promise<string> {
  const r = await git.run(repo, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { allowFail: true });
  if (r.exitCode !== 0) throw noCommits(repo);
  return r.stdout;
}

const notARepo = (dir: string) => new AciaError('NOT_A_GIT_REPO', `${dir} is not inside a git repository`, { hint: 'run `git init` and commit your code first, or pass --repo <dir>' });
const noCommits = (repo: string) => new AciaError('REPO_NO_COMMITS', `${repo} has no commits yet`, { hint: 'commit your code first: git add -A && git commit -m "initial"' });

/** What starting a run asks of the repository, from one git process. */
export interface RepoFacts {
  /** The top of the work tree. */
  root: string;
  /** The common git dir (shared by linked worktrees), absolute. */
  commonDir: string;
  /** HEAD's commit. */
  head: string;
  /** The checked-out branch's short name; null when HEAD is detached. */
  branch: string | null;
}

/**
 * `repoRoot`, `requireCommit`, the common dir and the current branch in one `git rev-parse` (each was a
 * process of its own, on the path to a run's first model request). rev-parse prints its answers in the
 * order asked and stops at the first it cannot give, so an unborn HEAD shows as a missing commit line.
 *
 * @throws AciaError NOT_A_GIT_REPO, REPO_NO_COMMITS
 */
export async function probeRepo(git: Git, dir: string): Promise<RepoFacts> {
  const r = await git.run(dir, ['rev-parse', '--show-toplevel', '--git-common-dir', 'HEAD^{commit}', '--symbolic-full-name', 'HEAD'], { allowFail: true });
  const lines = r.stdout.split('\n');
  const [root, common, commit, ref] = lines;
  if (root === undefined || root === '' || common === undefined) throw notARepo(dir);
  if (r.exitCode !== 0 || commit === undefined || !/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(commit)) throw noCommits(root);
  if (lines.length !== 4 || ref === undefined) {
    // A path with a newline in it: ask one question at a time.
    const top = await repoRoot(git, dir);
    const gitDir = (await git.run(top, ['rev-parse', '--git-common-dir'])).stdout;
    return { root: top, commonDir: resolve(top, gitDir), head: await requireCommit(git, top), branch: await git.currentBranch(top) };
  }
  return { root, commonDir: resolve(dir, common), head: commit, branch: ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null };
}

/** Past this many untracked files, --include-uncommitted refuses unless forced. */
export const UNTRACKED_LIMIT = 1000;

/**
 * Installed dependencies, tool caches and test byproducts (DEPENDENCY_EXCLUDES): never snapshotted, whatever
 * .gitignore says. A repo without a .gitignore (a package unpacked from a registry) would otherwise
 * snapshot all of node_modules into the run.
 */
function isDependencyPath(f: string): boolean {
  const segments = f.split('/');
  return segments.some((seg) => (DEPENDENCY_EXCLUDES.anywhere as readonly string[]).includes(seg)) || DEPENDENCY_EXCLUDES.rootOnly.some((p) => f === p || f.startsWith(`${p}/`));
}

/**
 * The untracked files git does not ignore, without dependency and cache directories and .acia/. Filtered
 * here rather than with exclude pathspecs: git fails an `add` whose exclude pathspec names an ignored path.
 */
export async function untrackedFiles(git: Git, repo: string): Promise<string[]> {
  const r = await git.run(repo, ['ls-files', '--others', '--exclude-standard', '-z']);
  return r.stdout.split('\0').filter((f) => f !== '' && !f.startsWith('.acia/') && !isDependencyPath(f));
}

/**
 * A commit of the working tree as it is (tracked changes and untracked, unignored files), on top of HEAD;
 * installed dependencies and test byproducts are left out even when .gitignore does not list them.
 * Built like a checkpoint (no filters, no submodule entered), but nothing in the user's checkout is removed.
 */
export async function snapshotWorkingTree(git: Git, repo: string, head: string): Promise<string> {
  const tree = await worktreeTree(git, repo, {}, excludePathspecs());
  return (await git.run(repo, ['commit-tree', tree, '-p', head, '-m', 'acia: snapshot of uncommitted changes'])).stdout;
}

/** Refuses a snapshot of a huge untracked tree (usually build output or dependencies nobody ignored). */
export async function checkUntracked(git: Git, repo: string, force: boolean): Promise<void> {
  const files = await untrackedFiles(git, repo);
  if (files.length <= UNTRACKED_LIMIT || force) return;
  const byDir = new Map<string, number>();
  for (const f of files) {
    const top = f.includes('/') ? `${f.slice(0, f.indexOf('/'))}/` : f;
    byDir.set(top, (byDir.get(top) ?? 0) + 1);
  }
  const biggest = [...byDir.entries()].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([d, n]) => `${d} (${n})`).join(', ');
  throw new AciaError('USAGE', `--include-uncommitted would snapshot ${files.length} untracked files (most in ${biggest}); refusing past ${UNTRACKED_LIMIT}`, {
    hint: 'add what should not be part of the run to .gitignore, or pass --force-uncommitted to take them all',
  });
}

/** Keeps .acia/ out of `git status` without touching a tracked file. */
export async function excludeAciaDir(git: Git, repo: string, commonDir?: string): Promise<void> {
  const common = commonDir ?? (await git.run(repo, ['rev-parse', '--git-common-dir'])).stdout;
  const dir = isAbsolute(common) ? common : join(repo, common);
  const file = join(dir, 'info', 'exclude');
  const text = await readFile(file, 'utf8').catch(() => '');
  if (text.split('\n').some((l) => l.trim() === '.acia/')) return;
  await mkdir(join(dir, 'info'), { recursive: true });
  await appendFile(file, `${text === '' || text.endsWith('\n') ? '' : '\n'}.acia/\n`);
}
