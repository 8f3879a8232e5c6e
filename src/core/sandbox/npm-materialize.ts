// npm (and Yarn 1) cannot add a dependency to a node_modules whose entries are links into the read-only originals: it
// takes each link for a linked package (and writes a lockfile naming /tmp/.acia-originals), or, following
// a lockfile, re-downloads every package. So before a command that runs npm's installer in a task
// worktree, the sandbox replaces the links with copies of the originals, inside the worktree (the user's
// install is only read), once per worktree: npm then sees the install the user has, adds to it, and writes
// the lockfile the user would get. The copy costs what copying the install costs (about 1-2 s for 86 MB).
import { SANDBOX_ORIGINALS } from './deps.js';

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

/**
 * pnpm adds through its store, which the sandbox shows read-only, and refuses a node_modules installed
 * from another store than the one it is given (`.modules.yaml` storeDir). So for a pnpm installer the
 * task's copied node_modules is re-pointed at a store of the task's own, inside it (never committed):
 * pnpm then fetches only what the task adds (the packages already in the copied `.pnpm` stay as they
 * are) and links it from there. `rootNodeModules` is the workspace root's node_modules as the command sees it.
 */
export function pnpmStoreScript(rootNodeModules: string): string {
  const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  const store = `${rootNodeModules}/.acia-pnpm-store`;
  const modules = q(`${rootNodeModules}/.modules.yaml`);
  // Keeps the store's layout version (v3 for pnpm 9, v10 for pnpm 10) after the new directory.
  const sed = `s|^\\(storeDir: \\).*/\\(v[0-9][0-9]*\\)$|\\1${store.replace(/[\\|&]/g, '\\$&')}/\\2|`;
  return `if [ -f ${modules} ]; then sed -i ${q(sed)} ${modules} || exit 125; fi; export npm_config_store_dir=${q(store)}`;
}
