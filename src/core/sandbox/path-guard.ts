// The path guard: every file-tool path is resolved against the worktree root with realpath semantics, at call time.
import * as nodePath from 'node:path';
import type * as NodeFs from 'node:fs';
import { AciaError } from '../errors.js';

export type GuardFs = Pick<typeof NodeFs, 'realpathSync' | 'lstatSync' | 'readlinkSync' | 'readFileSync'>;

export interface ResolvedPath {
  /** Absolute real path (existing components resolved through symlinks). */
  abs: string;
  /** Path relative to the real root, with '/' separators ('' for the root itself). */
  rel: string;
  /** True when the final component exists. */
  exists: boolean;
}

const MAX_LINKS = 40;

/**
 * Resolves `requested` inside `root`. Refuses `..` escapes, absolute paths outside, symlinks (existing or
 * dangling) that lead outside, and anything inside `.git` or the git dir a `.git` file points to.
 * Symlinks are resolved component by component through the injected fs, so a link made after start is seen.
 */
export function resolveInRoot(fs: GuardFs, root: string, requested: string): ResolvedPath {
  if (requested.includes('\0')) throw outside(requested, 'contains a NUL byte');
  const rootReal = fs.realpathSync(root);
  let segments: string[];
  if (nodePath.isAbsolute(requested)) {
    const rebased = rebaseAbsolute(root, rootReal, nodePath.resolve(requested));
    if (rebased === null) throw outside(requested, 'is outside the worktree');
    segments = splitSegments(nodePath.relative(rootReal, rebased));
  } else {
    segments = splitSegments(requested);
  }
  // Walk physically, like the kernel: `..` after a symlink climbs from the link's target, not the link.
  let current = rootReal;
  let exists = true;
  let hops = 0;
  const pending = [...segments];
  while (pending.length > 0) {
    const seg = pending.shift() as string;
    if (seg === '.') continue;
    if (seg === '..') {
      current = nodePath.dirname(current);
      if (!isWithin(rootReal, current)) throw outside(requested, 'climbs out of the worktree with ..');
      continue;
    }
    const next = nodePath.join(current, seg);
    const st = lstatOrNull(fs, next);
    if (st === null) {
      if (pending.includes('..')) throw outside(requested, 'uses .. after a missing component');
      exists = false;
      current = nodePath.join(next, ...pending);
      break;
    }
    if (st.isSymbolicLink()) {
      if (++hops > MAX_LINKS) throw outside(requested, 'has too many symbolic links');
      const target = String(fs.readlinkSync(next));
      const targetAbs = nodePath.resolve(current, target);
      if (!isWithin(rootReal, targetAbs)) {
        throw outside(requested, `is a symlink leading outside the worktree (${seg} -> ${target})`);
      }
      // Re-walk the target from where the link lives: it may itself contain links or `..`.
      if (nodePath.isAbsolute(target)) {
        pending.unshift(...splitSegments(nodePath.relative(rootReal, targetAbs)));
        current = rootReal;
      } else {
        pending.unshift(...splitSegments(target));
      }
      continue;
    }
    if (pending.length > 0 && !st.isDirectory()) throw outside(requested, `goes through a non-directory (${seg})`);
    current = next;
  }
  if (!isWithin(rootReal, current)) throw outside(requested, 'is outside the worktree');
  const rel = nodePath.relative(rootReal, current).split(nodePath.sep).join('/');
  guardGitMetadata(fs, rootReal, rel, requested);
  return { abs: current, rel, exists };
}

/** Every component named `.git` (any case: case-insensitive filesystems) and the git dir it points to are off-limits. */
function guardGitMetadata(fs: GuardFs, rootReal: string, rel: string, requested: string): void {
  if (rel.split('/').some((s) => s.toLowerCase() === '.git')) {
    throw outside(requested, 'is git metadata (.git); use git_status / git_diff');
  }
  const gitDir = pointedGitDir(fs, rootReal);
  if (gitDir !== null && isWithin(gitDir, nodePath.join(rootReal, rel))) {
    throw outside(requested, 'is inside the git directory');
  }
}

/** Where the root's `.git` file points (worktrees), or null for a `.git` directory / no git. */
export function pointedGitDir(fs: GuardFs, rootReal: string): string | null {
  const dotGit = nodePath.join(rootReal, '.git');
  const st = lstatOrNull(fs, dotGit);
  if (st === null || !st.isFile()) return null;
  const text = String(fs.readFileSync(dotGit, 'utf8'));
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(text);
  if (!m?.[1]) return null;
  return nodePath.resolve(rootReal, m[1]);
}

function rebaseAbsolute(root: string, rootReal: string, abs: string): string | null {
  if (isWithin(rootReal, abs)) return abs;
  const rootAbs = nodePath.resolve(root);
  if (isWithin(rootAbs, abs)) return nodePath.join(rootReal, nodePath.relative(rootAbs, abs));
  return null;
}

export function isWithin(parent: string, child: string): boolean {
  const rel = nodePath.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${nodePath.sep}`) && !nodePath.isAbsolute(rel));
}

function splitSegments(p: string): string[] {
  return p.split(/[\\/]+/).filter((s) => s !== '');
}

function lstatOrNull(fs: GuardFs, p: string): NodeFs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw e;
  }
}

function outside(requested: string, why: string): AciaError {
  return new AciaError('PATH_OUTSIDE_ROOT', `refused path ${JSON.stringify(requested)}: it ${why}`);
}
