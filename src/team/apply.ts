// What `--apply` checks before it merges a run branch into the user's checkout. An agent can un-ignore a
// path in one task and restore .gitignore in the next, so the final diff adds `.env` while .gitignore
// looks untouched; a plain merge would then overwrite the user's ignored `.env` (git treats ignored
// files as expendable) or plant `.acia/config.json` for the next run.
import * as fs from 'node:fs';
import type { Git } from './git.js';

export interface ApplyReview {
  /** Paths the merge would write over an untracked or ignored file (or through a non-directory) on disk. */
  overwrites: string[];
  /** Paths the run adds that the user's checkout ignores. */
  ignoredAdds: string[];
  /** Paths under .acia/ the run changes (run branches never should). */
  aciaPaths: string[];
}

const z = (out: string): string[] => out.split('\0').filter((p) => p !== '');

/** Reviews merging `branch` into the clean checkout at `repo`; reads only, runs no driver. */
export async function reviewApply(git: Git, repo: string, branch: string): Promise<ApplyReview> {
  // Names as byte strings (latin1) while checking, so a name that is not UTF-8 is found on disk too.
  const raw = { encoding: 'latin1' as const };
  const written = z((await git.run(repo, ['diff', '--name-only', '-z', '--no-renames', '--diff-filter=ACMRT', `HEAD...${branch}`], raw)).stdout);
  const added = z((await git.run(repo, ['diff', '--name-only', '-z', '--no-renames', '--diff-filter=A', `HEAD...${branch}`], raw)).stdout);
  const tracked = new Set(z((await git.run(repo, ['ls-tree', '-r', '-z', '--name-only', 'HEAD'], raw)).stdout));
  const overwrites = written.filter((p) => !tracked.has(p) && onDisk(repo, p, tracked));
  let ignoredAdds: string[] = [];
  if (added.length > 0) {
    const input = Buffer.from(`${added.join('\0')}\0`, 'latin1');
    ignoredAdds = z((await git.run(repo, ['check-ignore', '--no-index', '-z', '--stdin'], { ...raw, allowFail: true, input })).stdout);
  }
  const aciaPaths = written.concat(added).filter((p, i, all) => (p === '.acia' || p.startsWith('.acia/')) && all.indexOf(p) === i);
  const shown = (ps: string[]) => ps.map((p) => Buffer.from(p, 'latin1').toString('utf8'));
  return { overwrites: shown(overwrites), ignoredAdds: shown(ignoredAdds), aciaPaths: shown(aciaPaths) };
}

/** True when `path`, or a non-directory where one of its parents should be, is on disk. */
function onDisk(repo: string, path: string, tracked: Set<string>): boolean {
  const parts = path.split('/');
  for (let i = 1; i <= parts.length; i++) {
    if (i < parts.length && tracked.has(parts.slice(0, i).join('/'))) return false; // git merges that itself
    let st: fs.Stats;
    try {
      st = fs.lstatSync(Buffer.concat([Buffer.from(`${repo}/`), Buffer.from(parts.slice(0, i).join('/'), 'latin1')]));
    } catch {
      return false;
    }
    if (i === parts.length || !st.isDirectory()) return true;
  }
  return false;
}
