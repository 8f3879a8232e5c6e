// The clone checks: ACIA's own state in a repository (`.acia/runs`, `.acia/worktrees`) is written by ACIA
// alone. A clone that tracks it in git, or ships links there, is refused before a command acts on it: a
// planted ledger would be resumed (or cleaned) as if the user had started it, and a `.acia/worktrees` link
// would move the agents' worktrees, or `acia clean`'s removal, out of the repository.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { AciaError } from '../errors.js';
import { safeGit } from '../sandbox/safe-git.js';
import { aciaDir, memoryDir, runsDir, worktreesDir } from './acia-state.js';
import { checkRealDir, checkRegularOrMissing } from './no-follow.js';

const STATE_DIRS = ['.acia/runs', '.acia/worktrees'] as const;

/** Refuses a repository that tracks or links ACIA's run state, or ships a memory page that is a link. */
export async function guardAciaState(repo: string): Promise<void> {
  const tracked = await safeGit(repo, ['ls-files', '-z', '--', ...STATE_DIRS]);
  const first = tracked.stdout.split('\0').find((n) => n !== '');
  if (first !== undefined) {
    throw new AciaError('UNSAFE_REPO', `the repository tracks ACIA's own run state (${first}); ACIA will not use run records or worktrees that came with the repository`, {
      hint: 'if you committed it yourself: git rm -r --cached .acia/runs .acia/worktrees && git commit; otherwise do not run ACIA on this clone',
    });
  }
  checkRealDir(repo, aciaDir(repo));
  for (const d of [runsDir(repo), worktreesDir(repo)]) checkRealDir(repo, d);
  // Memory pages are read into the PM's prompt: a page linked to ~/.ssh/id_rsa is refused before any work.
  const memory = memoryDir(repo);
  if (checkRealDir(repo, memory)) {
    for (const name of readdirSync(memory)) if (name.endsWith('.md')) checkRegularOrMissing(join(memory, name));
  }
}
