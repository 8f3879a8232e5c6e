// Installed dependencies (node_modules, Python virtualenvs, Yarn PnP files) in task worktrees. A worktree
// holds only tracked files, so a task would see none of the project's installed dependencies. Each
// worktree gets a real `node_modules` directory with one entry per entry of the checkout's (links into
// the originals, which the sandbox shows read-only; the checkout's own links re-made so that workspace
// packages resolve in the task's tree), and a mount point (sandbox) or a link (host) per venv and PnP
// file. Tool caches (nyc's and babel's `.cache`, vite's `.vite` and `.vite-temp`) are left out, so each
// task writes its own, into its worktree, which checkpoints never commit (see DEPENDENCY_EXCLUDES).
//
// Why links and not mounts for node_modules: bubblewrap 0.8 (Debian 12) has no overlay mounts, one
// read-only bind per entry costs ~25 ms per 100 mounts on every command (490 ms for minimist's 398
// entries), one bind of the whole directory leaves no room for a tool's cache (EROFS), and a hard-linked
// copy shares inodes, so an in-place write would change the user's file. Measurements: docs/sandbox.md.
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { isWithin } from './path-guard.js';
import { checkDependencyEntry } from '../contain/dependency-entry.js';

/** What a dependency directory is: a package manager's node_modules or a Python virtualenv. */
export interface DependencyDir {
  /** Path relative to the checkout, '/'-separated. */
  rel: string;
  kind: 'node_modules' | 'venv' | 'yarn-pnp';
}

/** Entries of node_modules that tools write into: never linked, so the task gets its own. */
const WRITABLE_NODE_MODULES_ENTRIES = new Set(['.cache', '.vite', '.vite-temp', '.vitest', '.tmp', '.nyc_output', '.eslintcache']);
/** Directories never searched for packages. */
const SKIP_DIRS = new Set(['node_modules', '.git', '.acia', '.venv', 'venv', '.hg', '.svn', 'dist', 'build', 'coverage', '.nyc_output']);
/** How deep workspace packages are looked for (packages/x, apps/group/x, ...). */
const MAX_DEPTH = 4;
/** A walk of the checkout visits at most this many directories (a huge untracked tree must not stall a run). */
const MAX_DIRS = 5000;
const YARN_PNP_FILES = ['.pnp.cjs', '.pnp.js', '.pnp.loader.mjs', '.yarn/cache', '.yarn/unplugged', '.yarn/install-state.gz'];

/**
 * Paths that hold installed dependencies, tool caches and test byproducts: a checkpoint never commits
 * them, whatever the repository's .gitignore says. Names in ANYWHERE match at any depth; ROOT_ONLY
 * names only at the worktree root (a source directory may well be called `coverage` or `venv`).
 */
export const DEPENDENCY_EXCLUDES = {
  // `.venv` anywhere: a task's own copy of a package's venv (venv-copy.ts) is a real directory.
  anywhere: ['node_modules', '.venv', '__pycache__', '.pytest_cache', '.nyc_output', '.mypy_cache', '.ruff_cache'],
  rootOnly: ['venv', 'coverage', '.cache', '.jest-cache', '.pnp.cjs', '.pnp.js', '.pnp.loader.mjs', '.yarn/cache', '.yarn/unplugged', '.yarn/install-state.gz'],
} as const;

/** Git pathspecs (after `.`) that leave DEPENDENCY_EXCLUDES out. */
export function excludePathspecs(): string[] {
  return [
    ...DEPENDENCY_EXCLUDES.anywhere.flatMap((p) => [`:(exclude,glob)**/${p}`, `:(exclude,glob)**/${p}/**`]),
    // Literal (not glob): a directory name matches everything under it, and `x/**` would make git refuse
    // the whole command when x is a symlink ("beyond a symbolic link").
    ...DEPENDENCY_EXCLUDES.rootOnly.map((p) => `:(exclude,literal)${p}`),
  ];
}

export function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

export function exists(p: string): boolean {
  try {
    fs.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/** A real directory (not a symlink: a link could point anywhere, and its target is not the checkout's). */
export function isRealDir(p: string): boolean {
  try {
    return fs.lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The dependency directories of a checkout: `node_modules` beside every package.json (the root and
 * workspace packages, up to MAX_DEPTH deep), `.venv`/`venv` holding a pyvenv.cfg beside the root or a
 * package, and Yarn Plug'n'Play files at the root. Symlinked directories are not followed.
 */
export function findDependencyDirs(checkout: string): DependencyDir[] {
  const out: DependencyDir[] = [];
  let visited = 0;
  const walk = (rel: string, depth: number): void => {
    if (++visited > MAX_DIRS) return;
    const abs = nodePath.join(checkout, rel);
    const hasManifest = ['package.json', 'pyproject.toml', 'setup.py', 'setup.cfg', 'requirements.txt'].some((f) => exists(nodePath.join(abs, f)));
    if (hasManifest || rel === '') {
      if (isRealDir(nodePath.join(abs, 'node_modules'))) out.push({ rel: join(rel, 'node_modules'), kind: 'node_modules' });
      for (const v of ['.venv', 'venv']) {
        if (isRealDir(nodePath.join(abs, v)) && exists(nodePath.join(abs, v, 'pyvenv.cfg'))) out.push({ rel: join(rel, v), kind: 'venv' });
      }
    }
    if (depth >= MAX_DEPTH) return;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(abs, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (!e.isDirectory() || SKIP_DIRS.has(e.name) || e.name.startsWith('.')) continue;
      walk(join(rel, e.name), depth + 1);
    }
  };
  walk('', 0);
  for (const f of YARN_PNP_FILES) if (exists(nodePath.join(checkout, f))) out.push({ rel: f, kind: 'yarn-pnp' });
  return out;
}

function join(a: string, b: string): string {
  return a === '' ? b : `${a}/${b}`;
}

export interface LinkReport {
  /** Dependency dirs laid out in the worktree. */
  linked: string[];
  /** Symlinks (and mount points) created. */
  links: number;
}

/**
 * How a worktree presents the checkout's installed dependencies.
 * - `sandbox`: commands see the worktree at the checkout's own path (task-view.ts). A node_modules is a
 *   real directory of links into the originals, which the sandbox shows read-only at SANDBOX_ORIGINALS
 *   beside a second, read-only view of the task's tree (so a link inside them such as pnpm's
 *   `.pnpm/node_modules/@s/core -> ../../../../packages/core` still lands in the task's tree); a
 *   virtualenv or Yarn PnP file gets an empty mount point, over which the sandbox binds the original at
 *   its own path.
 * - `host` (`--sandbox off`): the same node_modules directory with links to the checkout's originals, and
 *   a link per virtualenv or PnP file.
 * In both, a link the checkout's node_modules holds itself (a workspace package, pnpm's `name ->
 * .pnpm/...`) is re-made so that it resolves in the task's tree, never in the checkout's sources.
 */
export type DependencyView = 'sandbox' | 'host';

/** Where the sandbox shows the task's tree a second time, read-only, with the checkout's node_modules bound in it. */
export const SANDBOX_ORIGINALS = '/tmp/.acia-originals';

/**
 * Lays out `checkout`'s installed dependencies in `worktree` for `view`. A dependency dir whose package
 * is not in the worktree, or a path the worktree already has (tracked), is left alone.
 */
export function linkDependencies(checkoutPath: string, worktree: string, dirs?: readonly DependencyDir[], view: DependencyView = 'host'): LinkReport {
  // Real paths: the sandbox binds the originals at their real paths, where the links must point.
  const checkout = fs.realpathSync(checkoutPath);
  dirs ??= findDependencyDirs(checkout);
  const report: LinkReport = { linked: [], links: 0 };
  const root = fs.realpathSync(worktree);
  for (const d of dirs) {
    const src = nodePath.join(checkout, d.rel);
    const dst = nodePath.join(root, d.rel);
    const parent = nodePath.dirname(dst);
    // The worktree is the run branch, which agents wrote: `packages/a` may be a committed symlink to `/`.
    // Nothing is made unless every existing component of the path is a real directory inside the worktree.
    if (!physicallyInside(root, parent)) continue;
    // The checkout's side: only an entry that is really in the checkout (core/contain) is linked to.
    if (!checkDependencyEntry(checkout, d.rel).ok) continue;
    if (d.kind !== 'yarn-pnp' && !isDir(parent)) continue; // that package is not in this worktree
    if (d.kind === 'node_modules') {
      if (exists(dst) && !isRealDir(dst)) continue;
      const originals = view === 'sandbox' ? nodePath.join(SANDBOX_ORIGINALS, d.rel) : src;
      report.links += mirrorNodeModules({ checkout, root, view }, src, dst, originals, 0);
      report.linked.push(d.rel);
    } else {
      if (exists(dst)) continue;
      fs.mkdirSync(parent, { recursive: true });
      if (view === 'host') fs.symlinkSync(src, dst);
      else if (isRealDir(src)) fs.mkdirSync(dst);
      else fs.writeFileSync(dst, '', { flag: 'wx' });
      report.links++;
      report.linked.push(d.rel);
    }
  }
  return report;
}

interface MirrorContext {
  checkout: string;
  root: string;
  view: DependencyView;
}

/**
 * Fills `dst` with one entry per entry of the original node_modules `src`: the checkout's own links
 * re-made (see relink), scope directories (`@types`) and `.bin` mirrored one level down, anything else a
 * link to `originals/<name>`. Tool caches are left out, so each task writes its own.
 */
function mirrorNodeModules(m: MirrorContext, src: string, dst: string, originals: string, depth: number): number {
  fs.mkdirSync(dst, { recursive: true });
  let made = 0;
  for (const e of fs.readdirSync(src, { withFileTypes: true })) {
    if (depth === 0 && WRITABLE_NODE_MODULES_ENTRIES.has(e.name)) continue;
    const at = nodePath.join(dst, e.name);
    if (exists(at)) continue;
    if (e.isSymbolicLink()) {
      fs.symlinkSync(relink(m, nodePath.join(src, e.name), at), at);
      made++;
    } else if (depth === 0 && e.isDirectory() && (e.name.startsWith('@') || e.name === '.bin')) {
      // Scopes hold workspace links; `.bin` is where a package manager re-links commands when a task adds
      // a dependency (npm renames entries there): both are the task's own directories.
      made += mirrorNodeModules(m, nodePath.join(src, e.name), at, nodePath.join(originals, e.name), 1);
    } else {
      fs.symlinkSync(nodePath.join(originals, e.name), at);
      made++;
    }
  }
  return made;
}

/**
 * The target for a copy, at `at`, of the checkout's link `original`. In the sandbox the copy sits where
 * the original sits (the worktree is shown at the checkout's path), so the same text resolves the same
 * way, into the task's tree. On the host the copy is deeper (`.acia/worktrees/<run>/<task>/...`): a
 * target inside the checkout is re-expressed relative to the copy, at the same place in the worktree;
 * one outside becomes absolute.
 */
function relink(m: MirrorContext, original: string, at: string): string {
  const text = fs.readlinkSync(original);
  if (m.view === 'sandbox') return text;
  const target = nodePath.resolve(nodePath.dirname(original), text);
  if (!isWithin(m.checkout, target)) return target;
  return nodePath.relative(nodePath.dirname(at), nodePath.join(m.root, nodePath.relative(m.checkout, target)));
}

/** True when the deepest existing ancestor of `p` (and `p` itself if it exists) is reached without a symlink, inside `root`. */
function physicallyInside(root: string, p: string): boolean {
  let existing = p;
  while (!exists(existing)) {
    const up = nodePath.dirname(existing);
    if (up === existing) return false;
    existing = up;
  }
  try {
    return fs.realpathSync(existing) === existing && (existing === root || existing.startsWith(`${root}${nodePath.sep}`));
  } catch {
    return false;
  }
}

/** Cache of findDependencyDirs per checkout for the life of the process: runners ask on every command. */
const found = new Map<string, DependencyDir[]>();
export function dependencyDirsCached(checkoutPath: string): DependencyDir[] {
  const checkout = fs.realpathSync(checkoutPath);
  let d = found.get(checkout);
  if (!d) {
    d = findDependencyDirs(checkout);
    found.set(checkout, d);
  }
  return d;
}

/**
 * What the checkout's virtualenvs (and an activated VIRTUAL_ENV) run on, for the sandbox to show when a
 * mask hides it: each venv's base installation (pyvenv.cfg `home = <prefix>/bin`, e.g. a pyenv Python in
 * the user's home), and an activated venv outside the checkout itself.
 */
export function interpreterDirs(checkout: string | null, env: NodeJS.ProcessEnv): string[] {
  const venvs = checkout === null ? [] : dependencyDirsCached(checkout).filter((d) => d.kind === 'venv').map((d) => nodePath.join(checkout, d.rel));
  const out: string[] = [];
  const active = env.VIRTUAL_ENV;
  if (active !== undefined && nodePath.isAbsolute(active) && exists(nodePath.join(active, 'pyvenv.cfg')) && (checkout === null || !isWithin(checkout, active))) {
    venvs.push(active);
    out.push(active);
  }
  for (const v of venvs) {
    const home = pyvenvHome(v);
    const prefix = home === null ? null : nodePath.basename(home) === 'bin' ? nodePath.dirname(home) : home;
    // pyvenv.cfg is the clone's to write: only a Python installation is shown, never a directory it names.
    if (prefix !== null && looksLikePython(prefix)) out.push(prefix);
  }
  return out;
}

function looksLikePython(prefix: string): boolean {
  try {
    return fs.readdirSync(nodePath.join(prefix, 'lib')).some((n) => /^python3(\.\d+)?$/.test(n)) && fs.readdirSync(nodePath.join(prefix, 'bin')).some((n) => /^python3?$/.test(n));
  } catch {
    return false;
  }
}

/** The `home` key of a venv's pyvenv.cfg (the base interpreter's directory), or null. */
export function pyvenvHome(venv: string): string | null {
  let text: string;
  try {
    const cfg = nodePath.join(venv, 'pyvenv.cfg');
    const st = fs.lstatSync(cfg);
    if (!st.isFile() || st.size > 16 * 1024) return null;
    text = fs.readFileSync(cfg, 'utf8');
  } catch {
    return null;
  }
  const m = /^\s*home\s*=\s*(.+?)\s*$/m.exec(text);
  return m?.[1] !== undefined && nodePath.isAbsolute(m[1]) ? m[1] : null;
}
