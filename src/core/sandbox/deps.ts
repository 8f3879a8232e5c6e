// Installed dependencies (node_modules, Python virtualenvs) in task worktrees. A worktree holds only
// tracked files, so a task would see none of the project's installed dependencies. Each worktree gets a
// real `node_modules` directory of symlinks, one per entry of the checkout's, and a `.venv` symlink;
// the sandbox binds the checkout's originals read-only at their own paths, so the links resolve there
// and nothing a task runs can change them. New entries (nyc's and babel's `.cache`, vite's `.vite`) are
// written into the worktree's own directory, which checkpoints never commit (see DEPENDENCY_EXCLUDES).
//
// Why links and not mounts: bubblewrap 0.8 (Debian 12) has no overlay mounts, one read-only bind per
// entry costs ~25 ms per 100 mounts on every command (490 ms for minimist's 398 entries), and a
// hard-linked copy shares inodes, so an in-place write would change the user's file. Measurements:
// docs/sandbox.md.
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { checkDependencyEntry } from '../contain/dependency-entry.js';

/** What a dependency directory is: a package manager's node_modules or a Python virtualenv. */
export interface DependencyDir {
  /** Path relative to the checkout, '/'-separated. */
  rel: string;
  kind: 'node_modules' | 'venv' | 'yarn-pnp';
}

/** Entries of node_modules that tools write into: never linked, so the task gets its own. */
const WRITABLE_NODE_MODULES_ENTRIES = new Set(['.cache', '.vite', '.vitest', '.tmp']);
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
  anywhere: ['node_modules', '__pycache__', '.pytest_cache', '.nyc_output', '.mypy_cache', '.ruff_cache'],
  rootOnly: ['.venv', 'venv', 'coverage', '.cache', '.jest-cache', '.pnp.cjs', '.pnp.js', '.pnp.loader.mjs', '.yarn/cache', '.yarn/unplugged', '.yarn/install-state.gz'],
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

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function exists(p: string): boolean {
  try {
    fs.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/** A real directory (not a symlink: a link could point anywhere, and its target is not the checkout's). */
function isRealDir(p: string): boolean {
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
  /** Dependency dirs linked into the worktree. */
  linked: string[];
  /** Symlinks created. */
  links: number;
}

/**
 * Makes `checkout`'s installed dependencies visible in `worktree`: for each node_modules, a real
 * directory of per-entry symlinks (so tools can add their own cache entries beside them); for a
 * virtualenv or Yarn PnP file, one symlink. A dependency dir whose package is not in the worktree, or
 * a path the worktree already has (tracked), is left alone.
 */
export function linkDependencies(checkoutPath: string, worktree: string, dirs?: readonly DependencyDir[]): LinkReport {
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
      fs.mkdirSync(dst, { recursive: true });
      for (const name of fs.readdirSync(src)) {
        if (WRITABLE_NODE_MODULES_ENTRIES.has(name)) continue;
        const at = nodePath.join(dst, name);
        if (exists(at)) continue;
        fs.symlinkSync(nodePath.join(src, name), at);
        report.links++;
      }
      report.linked.push(d.rel);
    } else {
      if (exists(dst)) continue;
      fs.mkdirSync(parent, { recursive: true });
      fs.symlinkSync(src, dst);
      report.links++;
      report.linked.push(d.rel);
    }
  }
  return report;
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
