// A worker's copies of the fleet's repositories. Each submitted repository is mirrored once per worker
// (a bare mirror under <cache>/repos, refreshed with `git fetch`), and every run or task job works in a
// shared clone of that mirror: it borrows the mirror's objects, so a job's checkout costs a fetch of
// what changed, not a clone of the whole history. The run's own branches are then fetched from the
// real remote, which is the truth, and the clone pushes there. A run job makes its clone here
// (checkoutJob); task jobs take theirs from the worker's kept clones (task-clones.ts), made with the
// same steps.
import { createHash } from 'node:crypto';
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Git } from '../team/git.js';
import { remoteGit } from './remote-git.js';
import { checkBase, checkRepoUrl, type WorkerPolicy } from './worker-policy.js';

/** One fetch or clone of a mirror at a time in this process: git locks its refs. */
const busy = new Map<string, Promise<unknown>>();

function serialised<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const next = (busy.get(key) ?? Promise.resolve()).then(fn);
  busy.set(key, next.catch(() => undefined));
  return next;
}

export interface JobCheckout {
  /** The job's clone, HEAD detached at the run's base. */
  dir: string;
  /** Where each of the run's branches stood on the remote when fetched ('' = absent): pushes lease on it. */
  remoteRefs: Map<string, string>;
  /**
   * Settles when the fetch that fills `remoteRefs` is done (rejects if it failed): a task job's fetch runs
   * while the job reads its settings and ledger. Absent when the fetch was done before the checkout was given.
   */
  fetched?: Promise<void>;
  /**
   * Set when the clone guard (guardAciaState) passed on this very clone at its base when the worker made it
   * (a spare), and nothing has touched it since: the job need not run it again.
   */
  guarded?: boolean;
  /** Whether the clone is still as made here (no worktree, no merge under way): the first open of the run trusts it. */
  fresh: { open: boolean };
  /**
   * Set when the clone was kept from an earlier task job of the same run on this worker: it comes with no
   * worktree (put back without any), `runHead` is where that job left the run branch, and its branches
   * were just fetched.
   */
  kept?: { runHead: string };
}

/**
 * A clone for one job of run `runId` at `dir` (removed first), with the run branch `acia/<run>` and its
 * task branches `acia-tasks/<run>/*` as the remote has them, and HEAD detached at `base`.
 */
export async function checkoutJob(git: Git, o: { cacheDir: string; repoUrl: string; runId: string; base: string; dir: string; policy: WorkerPolicy }): Promise<JobCheckout> {
  await cloneAt(git, o);
  const remoteRefs = await fetchRunRefs(git, o.dir, o.runId);
  await detachAt(git, o.dir, o.base);
  return { dir: o.dir, remoteRefs, fresh: { open: true } };
}

/**
 * A clone of `repoUrl` at `dir` (removed first) that borrows the objects of this worker's mirror, with
 * no checkout and no branch of any run yet; its `origin` is the real remote. The mirror is made, or
 * fetched when it lacks `base`.
 */
export async function cloneAt(git: Git, o: { cacheDir: string; repoUrl: string; base: string; dir: string; policy: WorkerPolicy }): Promise<void> {
  const mirror = await mirrorWith(git, o);
  await rm(o.dir, { recursive: true, force: true });
  await serialised(mirror, () => remoteGit(o.cacheDir, ['clone', '-q', '--no-checkout', '--shared', mirror, o.dir]));
  await remoteGit(o.dir, ['remote', 'set-url', '--', 'origin', o.repoUrl]);
}

/** This worker's mirror of `repoUrl`, holding `base` when it is a commit the remote has. */
export async function mirrorWith(git: Git, o: { cacheDir: string; repoUrl: string; base: string; policy: WorkerPolicy }): Promise<string> {
  // Checked here too, where the URL reaches git: a task job's payload is the orchestrator's, but the
  // clone and every push go wherever it says.
  checkRepoUrl(o.policy, o.repoUrl);
  checkBase(o.base);
  const mirror = join(o.cacheDir, 'repos', `${createHash('sha256').update(o.repoUrl).digest('hex').slice(0, 24)}.git`);
  await serialised(mirror, async () => {
    if (await stat(join(mirror, 'HEAD')).then(() => true, () => false)) {
      // A task job names its run's base commit: when the mirror has it, the run's own branches (fetched
      // from the remote) are all the job needs, and the mirror's refresh can wait.
      if (/^[0-9a-f]{40}$/.test(o.base) && (await git.run(mirror, ['cat-file', '-e', `${o.base}^{commit}`], { allowFail: true })).exitCode === 0) return;
      await remoteGit(mirror, ['fetch', '-q', '--prune', 'origin']);
    } else {
      await mkdir(join(o.cacheDir, 'repos'), { recursive: true });
      await rm(mirror, { recursive: true, force: true });
      await remoteGit(o.cacheDir, ['clone', '-q', '--mirror', '--', o.repoUrl, mirror]);
      // Job clones borrow these objects: the mirror must never prune any of them away.
      await remoteGit(mirror, ['config', 'gc.auto', '0']);
    }
  });
  return mirror;
}

/**
 * Fetches run `runId`'s branches from the remote itself (the mirror may be seconds old) into the clone at
 * `dir`: the remote-tracking refs and the local branches both, in one fetch. Returns where each stood on
 * the remote ('' = absent). `kept`: the clone is one kept from an earlier job of the run, whose task
 * branches the remote no longer has are dropped (`--update-head-ok`: a run worktree there would be brought
 * to the new head by the caller).
 */
export async function fetchRunRefs(git: Git, dir: string, runId: string, o: { kept?: boolean; trackTasksOnly?: boolean } = {}): Promise<Map<string, string>> {
  const runBranch = `acia/${runId}`;
  const tasks = `acia-tasks/${runId}`;
  // One fetch sets both the remote-tracking refs and the local branches (a git process per branch costs
  // tens of ms under load). `trackTasksOnly`: the job checks its task's branch out itself meanwhile (an
  // early task worktree), so the task branches are fetched as remote-tracking refs only, never onto it.
  const heads = [`refs/heads/${runBranch}`, `refs/heads/${tasks}/*`];
  const flags = o.kept ? ['--update-head-ok', '--prune'] : [];
  const specs = heads.flatMap((h) => [`+${h}:${h.replace('refs/heads/', 'refs/remotes/origin/')}`, ...(o.trackTasksOnly && h !== heads[0] ? [] : [`+${h}:${h}`])]);
  await remoteGit(dir, ['fetch', '-q', ...flags, 'origin', ...specs], { allowFail: true });
  const listed = await git.run(dir, ['for-each-ref', '--format=%(refname) %(objectname)', `refs/remotes/origin/${runBranch}`, `refs/remotes/origin/${tasks}/`, `refs/heads/${runBranch}`, `refs/heads/${tasks}/`]);
  const remoteRefs = new Map<string, string>();
  const local = new Map<string, string>();
  for (const line of listed.stdout.split('\n').filter(Boolean)) {
    const [ref, sha] = line.split(' ') as [string, string];
    if (ref.startsWith('refs/remotes/origin/')) remoteRefs.set(ref.slice('refs/remotes/origin/'.length), sha);
    else local.set(ref.slice('refs/heads/'.length), sha);
  }
  // The fetch did that already, unless it failed (the run branch is not pushed yet) and the clone's
  // remote-tracking refs came from the mirror: then each local branch is set where they say, in one batch.
  const behind = [...remoteRefs].filter(([branch, sha]) => local.get(branch) !== sha && (!o.trackTasksOnly || branch === runBranch));
  if (behind.length > 0) await git.run(dir, ['update-ref', '--stdin'], { input: behind.map(([branch, sha]) => `update refs/heads/${branch} ${sha}\n`).join('') });
  return remoteRefs;
}

/**
 * fetchRunRefs started now, its answer filling the returned `remoteRefs` once `fetched` settles. Nothing may
 * read them, or move the run's refs, before then (FleetWorkspace waits for it before it opens the run).
 */
export function fetchBehind(git: Git, dir: string, runId: string, o: { kept?: boolean; trackTasksOnly?: boolean } = {}): { remoteRefs: Map<string, string>; fetched: Promise<void> } {
  const remoteRefs = new Map<string, string>();
  const fetched = fetchRunRefs(git, dir, runId, o).then((refs) => {
    for (const [branch, sha] of refs) remoteRefs.set(branch, sha);
  });
  // Awaited by the run's open; a job that ends before it (fenced, say) must not leave it unhandled.
  fetched.catch(() => undefined);
  return { remoteRefs, fetched };
}

/** Detaches the clone's HEAD at `base`: a commit the mirror has (a task job's always is), else a branch of the remote. */
export async function detachAt(git: Git, dir: string, base: string): Promise<void> {
  if ((await git.run(dir, ['checkout', '-q', '--detach', `${base}^{commit}`], { allowFail: true })).exitCode !== 0) await git.run(dir, ['checkout', '-q', '--detach', `origin/${base}`]);
}
