// Bringing a run's branch into the user's checkout: `--apply` merges it once it is safe to, and without
// it the front end says what a plain `git merge` would do to the checkout before the user runs one.
import { AciaError } from '../core/errors.js';
import { reviewApply } from '../team/apply.js';
import type { Git } from '../team/git.js';

const list = (ps: string[]) => `${ps.slice(0, 5).join(', ')}${ps.length > 5 ? ` (+${ps.length - 5} more)` : ''}`;

/** What merging `branch` would do that the user should look at first, one line each (none: nothing). */
export async function mergeWarnings(git: Git, repo: string, branch: string): Promise<string[]> {
  const review = await reviewApply(git, repo, branch).catch(() => null);
  if (review === null) return [];
  const say = (what: string, ps: string[]) => (ps.length > 0 ? [`${branch} ${what}: ${list(ps)}; review it before merging`] : []);
  return [...say('would overwrite untracked or ignored files in your checkout', review.overwrites), ...say('adds paths your checkout ignores', review.ignoredAdds), ...say("changes ACIA's own directory", review.aciaPaths)];
}

/** Merges the run branch into the checked-out branch, or refuses (APPLY_REFUSED, USAGE) saying why. */
export async function applyRunBranch(git: Git, repo: string, branch: string, allowIgnored: boolean): Promise<void> {
  // Checked before the team ran too; checked again because the user may have edited files meanwhile.
  if (await git.isDirty(repo)) {
    throw new AciaError('USAGE', `not applying ${branch}: your working tree has uncommitted changes`, { hint: `commit or stash them, then: git merge ${branch}` });
  }
  const review = await reviewApply(git, repo, branch);
  if (review.aciaPaths.length > 0) {
    throw new AciaError('APPLY_REFUSED', `not applying ${branch}: it changes ACIA's own directory: ${list(review.aciaPaths)}`, { hint: `inspect it: git diff HEAD...${branch} -- .acia` });
  }
  if (review.overwrites.length > 0) {
    throw new AciaError('APPLY_REFUSED', `not applying ${branch}: it would overwrite untracked or ignored files in your checkout: ${list(review.overwrites)}`, {
      hint: `move them aside and review the branch first: git diff HEAD...${branch}`,
    });
  }
  if (review.ignoredAdds.length > 0 && !allowIgnored) {
    throw new AciaError('APPLY_REFUSED', `not applying ${branch}: it adds paths your checkout ignores: ${list(review.ignoredAdds)}`, {
      hint: `review them (git diff HEAD...${branch} -- <path>); to merge anyway add --allow-ignored`,
    });
  }
  const r = await git.run(repo, ['merge', '--no-edit', branch], { allowFail: true });
  if (r.exitCode !== 0) {
    await git.run(repo, ['merge', '--abort'], { allowFail: true });
    throw new AciaError('INTERNAL', `merging ${branch} into your branch failed: ${r.stderr.split('\n')[0] ?? ''}`, { hint: `merge it yourself: git merge ${branch}` });
  }
}
