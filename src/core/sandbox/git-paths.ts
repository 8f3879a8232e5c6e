// Where a worktree's git metadata lives: the `.git` entry, the git dir it points to, and the common dir.
import * as fs from 'node:fs';
import * as nodePath from 'node:path';

export interface GitPaths {
  /** `.git` file or directory inside the worktree, or null. */
  dotGit: string | null;
  /** The git dir (for a linked worktree: .../.git/worktrees/<name>). */
  gitDir: string | null;
  /** The common dir (objects, refs, config, hooks). */
  commonDir: string | null;
  /** Every existing path above, for read-only binds. */
  readOnly: string[];
}

export function gitPathsOf(rootReal: string): GitPaths {
  const dotGit = nodePath.join(rootReal, '.git');
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dotGit);
  } catch {
    return { dotGit: null, gitDir: null, commonDir: null, readOnly: [] };
  }
  if (st.isDirectory()) return { dotGit, gitDir: dotGit, commonDir: dotGit, readOnly: [dotGit] };
  let gitDir: string | null = null;
  let commonDir: string | null = null;
  if (st.isFile()) {
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(fs.readFileSync(dotGit, 'utf8'));
    if (m?.[1]) gitDir = safeReal(nodePath.resolve(rootReal, m[1]));
    if (gitDir !== null) {
      try {
        const common = fs.readFileSync(nodePath.join(gitDir, 'commondir'), 'utf8').trim();
        commonDir = safeReal(nodePath.resolve(gitDir, common));
      } catch {
        commonDir = gitDir;
      }
    }
  }
  const readOnly = [dotGit, ...(commonDir ? [commonDir] : []), ...(gitDir && gitDir !== commonDir ? [gitDir] : [])];
  return { dotGit, gitDir, commonDir, readOnly: readOnly.filter((p) => fs.existsSync(p)) };
}

function safeReal(p: string): string | null {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
}
