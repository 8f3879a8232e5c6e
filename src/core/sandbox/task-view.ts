// What a sandboxed command in a task worktree sees of its checkout: the worktree shown at the checkout's
// own absolute path, the checkout's installed dependencies bound read-only on top at their own paths, and
// the git metadata moved out of the way. Every absolute path an environment carries (a `.pth` of an
// editable install, a venv's shebangs, pnpm's `.bin` shims, Yarn PnP's `.pnp.cjs`, workspace links)
// then resolves into the TASK's tree, while the checkout itself (its `.env`, `.acia/`, other worktrees)
// stays hidden. The bind decisions are all here; each dependency bound passes core/contain's check first.
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { dependencyDirsCached, SANDBOX_ORIGINALS } from './deps.js';
import { gitPathsOf, type GitPaths } from './git-paths.js';
import { enclosingCheckout } from './masks.js';
import { isWithin } from './path-guard.js';
import { checkoutOfWorktree } from '../contain/acia-state.js';
import { checkDependencyEntry } from '../contain/dependency-entry.js';
import { hasTaskCopy } from './venv-copy.js';

/** One bubblewrap mount operation, in the order given. */
export type Mount = { op: 'bind' | 'ro-bind'; src: string; dest: string } | { op: 'symlink'; target: string; dest: string } | { op: 'dir'; dest: string };

export interface TaskView {
  /** Where commands see the worktree: the checkout's path for a task worktree, else the worktree's own. */
  at: string;
  /** The checkout the worktree belongs to, or null when the worktree is not nested in one. */
  checkout: string | null;
  mounts: Mount[];
  /** Git config files as the sandbox sees them (sanitised copies are bound there). */
  gitPath: (p: string) => string;
}

/** Where the sandbox shows a checkout's git dir when the task view covers it. */
export const SANDBOX_GIT = '/tmp/.acia-git';

/**
 * The checkout a task worktree belongs to: the directory holding `.acia/worktrees` (even when the checkout
 * is itself a linked worktree), or the work tree of the common git dir around `root`.
 */
export function checkoutOf(root: string, git: GitPaths): string | null {
  return checkoutOfWorktree(root) ?? enclosingCheckout(root, git.commonDir);
}

/** Where a path of the worktree `root` is as a sandboxed process sees it (under the checkout's own path). */
export function pathInsideView(root: string, hostPath: string): string {
  let rootReal: string;
  try {
    rootReal = fs.realpathSync(root);
  } catch {
    return hostPath;
  }
  const checkout = checkoutOf(rootReal, gitPathsOf(rootReal));
  const real = fs.existsSync(hostPath) ? fs.realpathSync(hostPath) : nodePath.resolve(hostPath);
  return checkout !== null && isWithin(rootReal, real) ? nodePath.join(checkout, nodePath.relative(rootReal, real)) : hostPath;
}

export interface TaskViewOptions {
  /**
   * The command copies the venvs into the task's tree (venv-copy.ts): each original not yet copied is
   * shown read-only at SANDBOX_ORIGINALS instead of over its mount point, for the copy to read.
   */
  copyVenvs?: boolean;
}

/**
 * The mounts that make up the task view of `root` (a real path). `writeFile` stores a small generated
 * file (the relocated `.git` pointer) and returns its host path.
 */
export function taskView(root: string, git: GitPaths, hidden: readonly string[], writeFile: (name: string, text: string) => string, o: TaskViewOptions = {}): TaskView {
  const checkout = checkoutOf(root, git);
  const at = checkout ?? root;
  const mounts: Mount[] = [{ op: 'bind', src: root, dest: at }];
  const view = (p: string): string => (isWithin(root, p) ? nodePath.join(at, nodePath.relative(root, p)) : p);
  if (checkout !== null) mounts.push(...dependencyMounts(checkout, root, hidden.filter((h) => h !== checkout), o.copyVenvs ?? false));
  // Git metadata inside the checkout's path would be covered by the view: show it at SANDBOX_GIT instead.
  const moved = (p: string): boolean => checkout !== null && isWithin(checkout, p) && !isWithin(root, p);
  const gitPath = (p: string): string => (moved(p) ? nodePath.join(SANDBOX_GIT, nodePath.relative(checkout!, p)) : view(p));
  const binds = new Set<string>();
  for (const p of [git.commonDir, git.gitDir]) {
    if (p === null || [...binds].some((b) => isWithin(b, p))) continue;
    binds.add(p);
    mounts.push({ op: 'ro-bind', src: p, dest: gitPath(p) });
  }
  if (git.dotGit !== null && !binds.has(git.dotGit)) {
    // A linked worktree's `.git` file names its git dir by absolute path; when that moved, so must the file.
    const src = git.gitDir !== null && moved(git.gitDir) && fileKind(git.dotGit) === 'file' ? writeFile('dot-git', `gitdir: ${gitPath(git.gitDir)}\n`) : git.dotGit;
    mounts.push({ op: 'ro-bind', src, dest: view(git.dotGit) });
  }
  return { at, checkout, mounts, gitPath };
}

/**
 * The checkout's dependency dirs, read-only: a virtualenv or PnP file at its own path (over the mount
 * point linkDependencies made), a node_modules at SANDBOX_ORIGINALS inside a read-only second view of
 * the task's tree (the worktree's node_modules is a directory of links to there). A venv the task has
 * its own copy of is not bound at all; one about to be copied (`copyVenvs`) is bound at SANDBOX_ORIGINALS.
 */
function dependencyMounts(checkout: string, root: string, hidden: readonly string[], copyVenvs: boolean): Mount[] {
  const out: Mount[] = [];
  let originals = false;
  const atOriginals = (src: string, rel: string): void => {
    if (!originals) out.push({ op: 'ro-bind', src: root, dest: SANDBOX_ORIGINALS });
    originals = true;
    out.push({ op: 'ro-bind', src, dest: nodePath.join(SANDBOX_ORIGINALS, rel) });
  };
  for (const d of dependencyDirsCached(checkout)) {
    // Never a link out of the checkout or a path holding a masked directory: that would undo the mask.
    const entry = checkDependencyEntry(checkout, d.rel, hidden);
    if (!entry.ok) continue;
    const src = entry.path;
    const point = nodePath.join(root, d.rel);
    const kind = fileKind(src);
    // Only over a mount point of the same kind that the layout made in this worktree.
    if (kind === null || fileKind(point) !== kind) continue;
    if (d.kind === 'venv' && hasTaskCopy(point)) continue;
    if (d.kind === 'node_modules' || (d.kind === 'venv' && copyVenvs)) {
      atOriginals(src, d.rel);
    } else {
      out.push({ op: 'ro-bind', src, dest: nodePath.join(checkout, d.rel) });
    }
  }
  return out;
}

function fileKind(p: string): 'dir' | 'file' | null {
  try {
    const st = fs.lstatSync(p);
    return st.isDirectory() ? 'dir' : st.isFile() ? 'file' : null;
  } catch {
    return null;
  }
}
