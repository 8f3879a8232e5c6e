// Every host-side path under `<repo>/.acia/`: ACIA's run ledgers, worktrees, wiki, memory and bundles. The
// checkout may be a hostile clone, so nothing here follows a link: each directory on the way is lstat-ed,
// run ids are checked against the one pattern before they become a path, and removal never leaves the
// repository. Commands and servers get their `.acia` paths from here and nowhere else (the architecture
// check, scripts/check-architecture.mjs, refuses a `.acia` path built anywhere outside src/core/contain).
import { lstatSync, readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { AciaError } from '../errors.js';
import { checkRealDir, checkRegularOrMissing, ensureRealDir, readRegularFile } from './no-follow.js';
import { isRunId, requireRunId } from './run-id.js';

const ACIA = '.acia';

export function aciaDir(repo: string): string {
  return join(repo, ACIA);
}

/** `.acia/config.json`: the repository's own settings (read through core/config/trust's readRepoFile). */
export function repoConfigPath(repo: string): string {
  return join(repo, ACIA, 'config.json');
}

export function runsDir(repo: string): string {
  return join(repo, ACIA, 'runs');
}

/** `.acia/runs/<runId>`; the id is checked first (RUN_NOT_FOUND for anything that is not a run id). */
export function runDirOf(repo: string, runId: string): string {
  return join(runsDir(repo), requireRunId(runId, repo));
}

export function worktreesDir(repo: string): string {
  return join(repo, ACIA, 'worktrees');
}

/** `.acia/worktrees/<runId>`: the run's worktree root (one directory per task, and `@run`). */
export function runWorktreesDir(repo: string, runId: string): string {
  return join(worktreesDir(repo), requireRunId(runId, repo));
}

export function wikiDir(repo: string): string {
  return join(repo, ACIA, 'wiki');
}

export function memoryDir(repo: string): string {
  return join(wikiDir(repo), 'memory');
}

export function bundlesDir(repo: string): string {
  return join(repo, ACIA, 'bundles');
}

/** The default bundle location: `.acia/bundles/<runId>`. */
export function bundleDirOf(repo: string, runId: string): string {
  return join(bundlesDir(repo), requireRunId(runId, repo));
}

/** Creates a run's directory `.acia/runs/<runId>` as real directories; the id is checked first. */
export function ensureRunDir(repo: string, runId: string): string {
  const dir = runDirOf(repo, runId);
  ensureRealDir(repo, dir);
  return dir;
}

/** The files ACIA keeps in a run directory: each must be a regular file (or missing), `blobs` a real directory. */
const RUN_FILES = ['ledger.jsonl', 'manifest.json'] as const;

/**
 * A run's directory when it exists, checked: a valid id, `.acia`, `.acia/runs` and the run directory real
 * directories (no link anywhere on the way), its ledger and manifest regular files, `blobs` a real directory.
 * Null when there is no such run; UNSAFE_REPO when something on the way is a link or a special file.
 */
export function existingRunDir(repo: string, runId: string): string | null {
  if (!isRunId(runId)) return null;
  const dir = join(runsDir(repo), runId);
  if (!checkRealDir(repo, dir)) return null;
  for (const f of RUN_FILES) checkRegularOrMissing(join(dir, f));
  checkRegularOrMissing(join(dir, 'blobs'), true);
  return dir;
}

/** existingRunDir, or RUN_NOT_FOUND when the run has no directory (or no ledger, with `needLedger`). */
export function requireRunDir(repo: string, runId: string, o: { needLedger?: boolean; hint?: string } = {}): string {
  const hint = o.hint ?? 'list runs with `acia runs`';
  requireRunId(runId, repo, hint);
  const dir = existingRunDir(repo, runId);
  if (dir === null || (o.needLedger === true && kindAt(join(dir, 'ledger.jsonl')) !== 'file')) {
    throw new AciaError('RUN_NOT_FOUND', `no run ${runId} in ${repo}`, { hint });
  }
  return dir;
}

/**
 * The run ids under `.acia/runs`, sorted (ids sort by time): only names that are run ids and real
 * directories. A `.acia/runs` that is a link is refused (UNSAFE_REPO); a missing one is no runs.
 */
export function listRunIds(repo: string): string[] {
  const dir = runsDir(repo);
  if (!checkRealDir(repo, dir)) return [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    throw new AciaError('LEDGER_IO', `cannot list ${dir}: ${(e as Error).message}`, { cause: e });
  }
  return names.filter((n) => isRunId(n) && kindAt(join(dir, n)) === 'dir').sort();
}

/**
 * A blob of a run (`sha256:<hex>` or the bare hex), read without following a link; null when absent or
 * not a content hash. `runDir` comes from existingRunDir/requireRunDir.
 */
export function readRunBlob(runDir: string, ref: string): Buffer | null {
  const hex = ref.replace(/^sha256:/, '');
  if (!/^[0-9a-f]{64}$/.test(hex)) return null;
  try {
    return readRegularFile(runDir, join(runDir, 'blobs', hex));
  } catch {
    return null;
  }
}

/**
 * Removes a run's worktree directory `.acia/worktrees/<runId>` and everything in it. `.acia` and
 * `.acia/worktrees` must be real directories: a clone that ships `.acia/worktrees` as a link to a
 * directory of the user's is refused (UNSAFE_REPO) before anything is deleted. A run entry that is
 * itself a link is removed as a link; links inside are removed, never followed. True when something was removed.
 */
export async function removeRunWorktrees(repo: string, runId: string): Promise<boolean> {
  const root = runWorktreesDir(repo, runId);
  if (!checkRealDir(repo, worktreesDir(repo))) return false;
  if (kindAt(root) === 'missing') return false;
  await rm(root, { recursive: true, force: true });
  return true;
}

/** Whether `.acia/worktrees/<runId>` exists (as anything: a link counts, and is what removal would take). */
export function hasRunWorktrees(repo: string, runId: string): boolean {
  if (!checkRealDir(repo, worktreesDir(repo))) return false;
  return kindAt(runWorktreesDir(repo, runId)) !== 'missing';
}

/**
 * A page of `.acia/wiki` by a plain relative path (`index.md`, `runs/<id>.md`, `memory/lessons.md`): no
 * `..`, no absolute path, no link on the way or at the page. Null when the page does not exist.
 */
export function readWikiPage(repo: string, page: string): Buffer | null {
  if (!/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_.-]+)*\.md$/.test(page) || page.split('/').some((p) => p === '..' || p === '.')) {
    throw new AciaError('USAGE', `not a wiki page: ${page}`);
  }
  return readRegularFile(repo, join(wikiDir(repo), ...page.split('/')));
}

function kindAt(p: string): 'missing' | 'dir' | 'file' | 'other' {
  try {
    const st = lstatSync(p);
    return st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
  } catch {
    return 'missing';
  }
}

/**
 * The directories an agent or the repository can write, seen from a worktree: the worktree itself and,
 * for a task worktree under `<checkout>/.acia/worktrees/`, the checkout that holds it.
 */
export function writableRoots(worktree: string): string[] {
  const checkout = checkoutOfWorktree(worktree);
  return checkout === null ? [worktree] : [worktree, checkout];
}

/** The checkout holding `path` under its `.acia/worktrees/`, or null when `path` is not in one. */
export function checkoutOfWorktree(path: string): string | null {
  const marker = `${sep}${ACIA}${sep}worktrees${sep}`;
  const at = path.indexOf(marker);
  return at > 0 ? path.slice(0, at) : null;
}
