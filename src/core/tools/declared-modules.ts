// The modules a project says it has: its manifests' dependencies (package.json of the root and its
// workspace packages, pyproject.toml, requirements*.txt), its workspace packages' names and its own Python
// packages. A test run that cannot import one of these has an environment problem (the install is missing
// or not visible), not a code problem; environment-problem.ts asks this.
import * as nodePath from 'node:path';
import type { ToolContext } from './types.js';

const DEP_FIELDS = ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'] as const;
const SKIP = new Set(['node_modules', 'dist', 'build', 'coverage', '__pycache__']);
/** Manifests read at most: a huge tree must not stall a verdict. */
const MAX_MANIFESTS = 200;

/** A predicate over module names (normalised: case, `-`, `_` and `.` do not matter for Python names). */
export function declaredModules(ctx: Pick<ToolContext, 'fs' | 'root'>): (name: string) => boolean {
  const names = new Set<string>();
  const read = (rel: string): string | null => {
    try {
      return String(ctx.fs.readFileSync(nodePath.join(ctx.root, rel), 'utf8'));
    } catch {
      return null;
    }
  };
  let manifests = 0;
  const walk = (rel: string, depth: number): void => {
    if (manifests >= MAX_MANIFESTS) return;
    const pkg = read(join(rel, 'package.json'));
    if (pkg !== null) {
      manifests++;
      addPackageJson(pkg, names);
    }
    const py = read(join(rel, 'pyproject.toml'));
    if (py !== null) {
      manifests++;
      addPyproject(py, names);
    }
    if (depth === 3) return;
    let entries: string[];
    try {
      entries = ctx.fs.readdirSync(nodePath.join(ctx.root, rel)).map(String);
    } catch {
      return;
    }
    for (const e of entries) {
      const child = join(rel, e);
      if (e.startsWith('.') || SKIP.has(e) || !isDir(ctx, child)) continue;
      // A Python package (a directory with __init__.py) at the root or under src/ is the project's own.
      if (depth === 0 || rel === 'src') {
        if (read(join(child, '__init__.py')) !== null) names.add(normalise(e));
      }
      walk(child, depth + 1);
    }
    for (const e of entries) {
      if (/^requirements.*\.txt$/.test(e)) addRequirements(read(join(rel, e)) ?? '', names);
    }
  };
  walk('', 0);
  return (name) => names.has(name) || names.has(normalise(name));
}

function addPackageJson(text: string, names: Set<string>): void {
  let pkg: Record<string, unknown>;
  try {
    pkg = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return;
  }
  if (typeof pkg.name === 'string') names.add(pkg.name);
  for (const f of DEP_FIELDS) {
    const deps = pkg[f];
    if (typeof deps === 'object' && deps !== null) for (const k of Object.keys(deps)) names.add(k);
  }
}

/** PEP 621 `dependencies = [...]` / optional ones, Poetry's dependency tables, and the project's name. */
function addPyproject(text: string, names: Set<string>): void {
  const name = /^\s*name\s*=\s*["']([^"']+)["']/m.exec(text)?.[1];
  if (name !== undefined) names.add(normalise(name));
  for (const list of text.matchAll(/^\s*(?:dependencies|[\w-]+)\s*=\s*\[([^\]]*)\]/gm)) {
    for (const m of list[1]!.matchAll(/["']\s*([A-Za-z0-9][A-Za-z0-9._-]*)/g)) names.add(normalise(m[1]!));
  }
  let inDeps = false;
  for (const line of text.split('\n')) {
    const header = /^\s*\[([^\]]+)\]\s*$/.exec(line);
    if (header) {
      inDeps = /(^|\.)(dependencies|dev-dependencies)$/.test(header[1]!);
      continue;
    }
    const key = inDeps ? /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*=/.exec(line)?.[1] : undefined;
    if (key !== undefined && key !== 'python') names.add(normalise(key));
  }
}

function addRequirements(text: string, names: Set<string>): void {
  for (const line of text.split('\n')) {
    const m = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(line);
    if (m?.[1] !== undefined && !line.trim().startsWith('-')) names.add(normalise(m[1]));
  }
}

function normalise(name: string): string {
  return name.toLowerCase().replace(/[-.]/g, '_');
}

function join(a: string, b: string): string {
  return a === '' ? b : `${a}/${b}`;
}

function isDir(ctx: Pick<ToolContext, 'fs' | 'root'>, rel: string): boolean {
  try {
    return ctx.fs.lstatSync(nodePath.join(ctx.root, rel)).isDirectory();
  } catch {
    return false;
  }
}
