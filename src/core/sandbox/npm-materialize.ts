// npm cannot add a dependency to a node_modules whose entries are links into the read-only originals: it
// takes each link for a linked package (and writes a lockfile naming /tmp/.acia-originals), or, following
// a lockfile, re-downloads every package. So before a command that runs npm's installer in a task
// worktree, the sandbox replaces the links with copies of the originals, inside the worktree (the user's
// install is only read), once per worktree: npm then sees the install the user has, adds to it, and writes
// the lockfile the user would get. The copy costs what copying the install costs (about 1-2 s for 86 MB).
import { SANDBOX_ORIGINALS } from './deps.js';

/** A command that runs npm's installer (install, add, ci, uninstall, update, dedupe), anywhere in a shell line. */
const NPM_INSTALLER = /(^|[;&|(]\s*|\s)npm\s+(?:[-\w=]+\s+)*?(install|i|add|ci|uninstall|un|remove|rm|update|up|dedupe|ddp)(\s|$)/;

export function runsNpmInstaller(command: string): boolean {
  return NPM_INSTALLER.test(command);
}

/**
 * A shell prefix that turns every link in the task's node_modules (at `dirs`, absolute paths as the
 * command sees them) that points under `originals` into a copy, then leaves a marker so it runs once.
 * Without a sandbox `originals` is the checkout itself: npm must not write through a link into it.
 */
export function materializeScript(dirs: readonly string[], originals: string = SANDBOX_ORIGINALS): string {
  const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  const each = dirs
    .map((d) => `for e in ${q(d)}/* ${q(d)}/.[!.]* ${q(d)}/@*/*; do t=$(readlink "$e" 2>/dev/null) || continue; case "$t" in ${q(originals)}/*) rm "$e" && cp -a "$t" "$e" || exit 125;; esac; done`)
    .join('; ');
  return `if [ ! -e ${q(`${dirs[0] ?? '.'}/.acia-materialized`)} ]; then ${each}; touch ${q(`${dirs[0] ?? '.'}/.acia-materialized`)}; fi`;
}
