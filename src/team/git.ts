// The git operations the team performs on worktrees an agent has written to. Every call disables
// hooks, fsmonitor, external diff and textconv, and ignores system config, so nothing an agent wrote
// can make ACIA run code outside the sandbox.
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { excludePathspecs } from '../core/sandbox/deps.js';
import { safeGit } from '../core/sandbox/safe-git.js';
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
}

/** Every call goes through safeGit; commit dates come from the injected clock so runs are reproducible. */
export class Git {
  constructor(private readonly clock: Clock) {}

  async run(cwd: string, args: string[], opts: GitRunOptions = {}): Promise<GitResult> {
    const date = this.clock.now().toISOString();
    const r = await safeGit(cwd, args, {
      env: { ...IDENTITY, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date, GIT_TERMINAL_PROMPT: '0', ...opts.env },
      ...(opts.expectedGitDir === undefined ? {} : { expectedGitDir: opts.expectedGitDir }),
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
    await this.run(repo, ['worktree', 'remove', '--force', path], { allowFail: true });
    await this.run(repo, ['worktree', 'prune']);
    await this.run(repo, ['worktree', 'add', '--force', '-B', branch, path, at]);
  }

  async removeWorktree(repo: string, path: string): Promise<void> {
    await this.run(repo, ['worktree', 'remove', '--force', path], { allowFail: true });
  }

  /**
   * Commits everything in the worktree except installed dependencies, tool caches and test byproducts
   * (node_modules, .venv, .nyc_output, coverage, __pycache__, ...), whatever the repository's .gitignore
   * says; returns the new commit, or null when nothing changed.
   */
  async commitAll(cwd: string, message: string, expectedGitDir?: string, alsoExclude: readonly string[] = []): Promise<string | null> {
    const o = expectedGitDir === undefined ? {} : { expectedGitDir };
    await this.run(cwd, ['add', '-A', '--', '.', ...excludePathspecs(), ...alsoExclude.map((p) => `:(exclude,literal)${p}`)], o);
    const staged = await this.run(cwd, ['diff', '--cached', '--quiet'], { ...o, allowFail: true });
    if (staged.exitCode === 0) return null;
    await this.run(cwd, ['commit', '--no-verify', '-q', '-m', message], o);
    return (await this.run(cwd, ['rev-parse', 'HEAD'], o)).stdout;
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

  /** Merges `branch` into the branch checked out at `cwd`; a conflict is aborted and reported. */
  async merge(cwd: string, branch: string, message: string): Promise<{ commit: string | null; conflict: boolean; files: string[] }> {
    const before = await this.head(cwd);
    const r = await this.run(cwd, ['merge', '--no-ff', '--no-edit', '--no-verify', '-m', message, branch], { allowFail: true });
    if (r.exitCode !== 0) {
      const conflicted = await this.run(cwd, ['diff', '--name-only', '-z', '--diff-filter=U'], { allowFail: true });
      await this.run(cwd, ['merge', '--abort'], { allowFail: true });
      return { commit: null, conflict: true, files: splitZ(conflicted.stdout) };
    }
    const commit = await this.head(cwd);
    return { commit, conflict: false, files: await this.changedFiles(cwd, before, commit) };
  }

  async isAncestor(cwd: string, ancestor: string, of: string): Promise<boolean> {
    return (await this.run(cwd, ['merge-base', '--is-ancestor', ancestor, of], { allowFail: true })).exitCode === 0;
  }

  async resetHard(cwd: string, commit: string, expectedGitDir?: string): Promise<void> {
    const o = expectedGitDir === undefined ? {} : { expectedGitDir };
    await this.run(cwd, ['reset', '-q', '--hard', commit], o);
    await this.run(cwd, ['clean', '-q', '-fdx', '-e', 'node_modules'], o);
  }

  /** Where a worktree's `.git` file points right after ACIA created it (before any agent ran). */
  async gitDirOf(cwd: string): Promise<string> {
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
  if (r.exitCode !== 0) {
    throw new AciaError('NOT_A_GIT_REPO', `${dir} is not inside a git repository`, { hint: 'run `git init` and commit your code first, or pass --repo <dir>' });
  }
  return r.stdout;
}

export async function requireCommit(git: Git, repo: string): Promise<string> {
  const r = await git.run(repo, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { allowFail: true });
  if (r.exitCode !== 0) {
    throw new AciaError('REPO_NO_COMMITS', `${repo} has no commits yet`, { hint: 'commit your code first: git add -A && git commit -m "initial"' });
  }
  return r.stdout;
}

/**
 * A commit of the working tree as it is (tracked changes and untracked, unignored files), on top of HEAD;
 * installed dependencies and test byproducts are left out even when .gitignore does not list them.
 */
export async function snapshotWorkingTree(git: Git, repo: string, head: string, tmpIndex: string): Promise<string> {
  const env = { GIT_INDEX_FILE: tmpIndex };
  await git.run(repo, ['read-tree', head], { env });
  await git.run(repo, ['add', '-A', '--', '.', ':(exclude).acia', ...excludePathspecs()], { env });
  const tree = (await git.run(repo, ['write-tree'], { env })).stdout;
  return (await git.run(repo, ['commit-tree', tree, '-p', head, '-m', 'acia: snapshot of uncommitted changes'], { env })).stdout;
}

/** Keeps .acia/ out of `git status` without touching a tracked file. */
export async function excludeAciaDir(git: Git, repo: string): Promise<void> {
  const common = (await git.run(repo, ['rev-parse', '--git-common-dir'])).stdout;
  const dir = isAbsolute(common) ? common : join(repo, common);
  const file = join(dir, 'info', 'exclude');
  const text = await readFile(file, 'utf8').catch(() => '');
  if (text.split('\n').some((l) => l.trim() === '.acia/')) return;
  await mkdir(join(dir, 'info'), { recursive: true });
  await appendFile(file, `${text === '' || text.endsWith('\n') ? '' : '\n'}.acia/\n`);
}
