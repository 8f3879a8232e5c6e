// pip installs into a virtualenv, and the sandbox shows the user's venvs read-only (bound at their own
// paths, task-view.ts). So before a command that runs pip's installer, the task gets its own copy of each
// of the checkout's venvs, in its worktree at the same place: the worktree is shown at the checkout's own
// path, so the copy keeps every absolute path a venv carries (its scripts' shebangs, pyvenv.cfg, an
// editable install's `.pth` naming the checkout's `src/`, which is the task's `src/` in the view), and the
// original is no longer bound over it. pip then installs into the task's copy; the user's venv is only
// read. Once per worktree (a marker file in the copy); `cp --reflink=auto` shares blocks where the file
// system can (btrfs, XFS) and copies elsewhere. A checkpoint never commits a venv (deps.ts).
//
// Without a sandbox the worktree's venv is a link to the user's: it is replaced by a copy the same way,
// so pip never writes through it (the copy lives at the worktree's own path there, so run its Python as
// `.venv/bin/python -m pip`; a script's shebang still names the checkout's interpreter).
import * as fs from 'node:fs';
import * as nodePath from 'node:path';

/** Left in a task's copy of a venv: the sandbox stops binding the original over it. */
export const VENV_COPY_MARKER = '.acia-task-copy';

const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * A shell prefix that copies each venv `from` (as the command sees it) to `to` unless `to` already holds
 * the task's copy. In the sandbox `to` is an empty mount point; on the host (`replaceLink`) it is a link
 * to the original, removed first. Exit 125 when a copy fails (a full disk): the command does not run.
 */
export function venvCopyScript(copies: ReadonlyArray<{ from: string; to: string }>, replaceLink = false): string {
  return copies
    .map(({ from, to }) => {
      const copy = replaceLink ? `rm ${q(to)} && cp -a --reflink=auto ${q(from)} ${q(to)}` : `cp -a --reflink=auto ${q(from)}/. ${q(to)}/`;
      const marker = q(`${to}/${VENV_COPY_MARKER}`);
      return `if [ ! -e ${marker} ]; then { ${copy} && touch ${marker}; } || exit 125; fi`;
    })
    .join('\n');
}

/** True when the worktree's venv at `point` is a real directory holding the task's own copy. */
export function hasTaskCopy(point: string): boolean {
  try {
    return fs.lstatSync(point).isDirectory() && fs.lstatSync(nodePath.join(point, VENV_COPY_MARKER)).isFile();
  } catch {
    return false;
  }
}
