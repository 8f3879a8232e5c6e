// A merge into a branch that no worktree has checked out: `git merge-tree --write-tree` computes the merged
// tree from objects alone (the same ort merge `git merge` does), `commit-tree` makes the merge commit with
// both parents, and `update-ref` moves the branch only if it is still where the merge started. A fleet task
// job merges this way, so it never checks the run branch out: its clone needs no run worktree at all.
import type { Git } from '../team/git.js';
import type { GitBatchReader } from '../core/sandbox/git-batch.js';
import { changedPaths } from '../team/git-objects.js';

/** Whether this machine's git has `merge-tree --write-tree` (2.38 and later); learned from the first try. */
let writeTreeWorks: boolean | null = null;

/**
 * Merges `branch` into `into` (at `head`) in `repo` without a worktree. Null when it cannot be done so: the
 * merge conflicts (the caller merges in a worktree, where the conflict's files and hunks are read as
 * before), the run head's .gitattributes are not the checkout's, or git is too old for `merge-tree --write-tree`.
 */
export async function mergeWithoutWorktree(
  git: Git,
  repo: string,
  o: { into: string; head: string; branch: string; message: string; reader: GitBatchReader },
): Promise<{ commit: string; files: string[] } | null> {
  if (writeTreeWorks === false) return null;
  // merge-tree takes .gitattributes (`-merge`, `merge=union`, `binary`) from the clone's own checkout, at
  // the run's base; a merge in the run worktree takes them from the run head. Where the run changed them,
  // only the worktree merge is the one the run has always made.
  const attributes = await git.run(repo, ['diff-tree', '-r', '--quiet', 'HEAD', o.head, '--', ':(glob)**/.gitattributes'], { allowFail: true });
  if (attributes.exitCode !== 0) return null;
  // The task branch by name: only this job moves it, and it is done with it before it merges.
  const theirs = `refs/heads/${o.branch}`;
  const merged = await git.run(repo, ['merge-tree', '--write-tree', o.head, theirs], { allowFail: true });
  // 0: merged cleanly, the tree's id on the first line; 1: conflicts; anything else: not understood.
  if (merged.exitCode !== 0) {
    if (merged.exitCode !== 1) writeTreeWorks = false;
    return null;
  }
  writeTreeWorks = true;
  const tree = merged.stdout.split('\n')[0]!.trim();
  const commit = (await git.run(repo, ['commit-tree', tree, '-p', o.head, '-p', theirs, '-m', o.message])).stdout.trim();
  // Compare-and-swap: a branch moved meanwhile fails here rather than losing that move.
  await git.run(repo, ['update-ref', '-m', o.message, `refs/heads/${o.into}`, commit, o.head]);
  return { commit, files: await changedPaths(o.reader, o.head, commit) };
}
