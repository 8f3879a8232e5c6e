// ACIA's own state in a repository (`.acia/runs`, `.acia/worktrees`) is written by ACIA alone. A clone that
// tracks it in git, or ships links there, is refused before a run starts or resumes: a planted ledger
// would be resumed as if the user had started it, and a `.acia/worktrees` link would move the agents'
// worktrees out of the repository.
import { join } from 'node:path';
import { AciaError } from '../core/errors.js';
import { readdirSync } from 'node:fs';
import { checkRealDir, checkRegularOrMissing, ensureRealDir } from '../core/fs/no-follow.js';
import type { Git } from './git.js';

const STATE_DIRS = ['.acia/runs', '.acia/worktrees'] as const;

export async function guardAciaState(git: Git, repo: string): Promise<void> {
  const tracked = await git.run(repo, ['ls-files', '-z', '--', ...STATE_DIRS]);
  const first = tracked.stdout.split('\0').find((n) => n !== '');
  if (first !== undefined) {
    throw new AciaError('UNSAFE_REPO', `the repository tracks ACIA's own run state (${first}); ACIA will not use run records or worktrees that came with the repository`, {
      hint: 'if you committed it yourself: git rm -r --cached .acia/runs .acia/worktrees && git commit; otherwise do not run ACIA on this clone',
    });
  }
  checkRealDir(repo, join(repo, '.acia'));
  for (const d of STATE_DIRS) checkRealDir(repo, join(repo, d));
  // Memory pages are read into the PM's prompt: a page linked to ~/.ssh/id_rsa is refused before any work.
  const memory = join(repo, '.acia', 'wiki', 'memory');
  if (checkRealDir(repo, memory)) {
    for (const name of readdirSync(memory)) if (name.endsWith('.md')) checkRegularOrMissing(join(memory, name));
  }
}

/** Creates `.acia/<...parts>` as real directories (no link on the way). */
export function ensureAciaDir(repo: string, ...parts: string[]): string {
  const dir = join(repo, '.acia', ...parts);
  ensureRealDir(repo, dir);
  return dir;
}
