// Replay bundles under version control with immutable ids (ACM v0.5 §8 Artifact Governance): each bundle
// written is also committed, as a tree of exactly its files, to `refs/acia/bundles/<runId>` in the run's
// repository. The commit and tree ids are content addresses git keeps; a bundle written again for the
// same run (a resumed run) becomes a new commit whose parent is the previous one, so no version is lost.
// No branch, index or checkout of the user is touched (a private index; the ref is outside refs/heads),
// and `acia clean` leaves these refs alone.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AciaError } from '../core/errors.js';
import { safeGit, type SafeGitResult } from '../core/sandbox/safe-git.js';

export function bundleRef(runId: string): string {
  return `refs/acia/bundles/${runId}`;
}

async function must(r: Promise<SafeGitResult>, what: string): Promise<string> {
  const done = await r;
  if (done.exitCode !== 0) throw new AciaError('LEDGER_IO', `could not commit the replay bundle (${what}): ${done.stderr.trim() || `git exit ${done.exitCode}`}`);
  return done.stdout.trim();
}

/** Commits the bundle in `dir` to the run's bundle ref; returns the commit id. `at` dates the commit (the run's last entry). */
export async function commitBundle(repo: string, runId: string, dir: string, at: Date): Promise<string> {
  const ref = bundleRef(runId);
  const scratch = await mkdtemp(join(tmpdir(), 'acia-bundle-index-'));
  const date = `${Math.floor(at.getTime() / 1000)} +0000`;
  const env = {
    GIT_INDEX_FILE: join(scratch, 'index'),
    GIT_AUTHOR_NAME: 'acia',
    GIT_AUTHOR_EMAIL: 'acia@localhost',
    GIT_COMMITTER_NAME: 'acia',
    GIT_COMMITTER_EMAIL: 'acia@localhost',
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_DATE: date,
  };
  try {
    // -f: the user's ignore rules must not leave a file of the bundle out. Loose objects, as git writes them
    // by default: a bundle holds a model request per call, each the conversation so far, and only `git gc`
    // finds those deltas (a pack written by bulk check-in, core.bigFileThreshold, is never deltified by a
    // later gc: 200 requests stayed 4.0 MB where loose objects gc to 0.19 MB).
    await must(safeGit(repo, ['--work-tree', dir, 'add', '-A', '-f', '--', '.'], { env }), 'add');
    const tree = await must(safeGit(repo, ['write-tree'], { env }), 'write-tree');
    const previous = (await safeGit(repo, ['rev-parse', '-q', '--verify', `${ref}^{commit}`])).stdout.trim();
    if (previous !== '' && (await must(safeGit(repo, ['rev-parse', `${previous}^{tree}`]), 'rev-parse')) === tree) return previous;
    const commit = await must(safeGit(repo, ['commit-tree', tree, ...(previous === '' ? [] : ['-p', previous]), '-m', `acia replay bundle of run ${runId}`], { env }), 'commit-tree');
    // Compare-and-swap on the previous value: a concurrent writer of the same ref fails rather than overwrites.
    await must(safeGit(repo, ['update-ref', ref, commit, previous]), 'update-ref');
    return commit;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
