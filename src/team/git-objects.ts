// Git objects read and written without a git process each: checkpoints and merges used to spend a
// process on every `rev-parse`, `hash-object`, `commit-tree` and `diff --name-only`, about 5 ms apiece.
// Reads go through the run's one `git cat-file --batch` (loose or packed, refs resolved by git itself);
// blobs and commits are written as loose objects in the format git writes, for SHA-1 repositories only
// (callers fall back to git plumbing otherwise). Trees are still written by `git write-tree`, which also
// checks that every blob the index names exists.
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { deflateSync } from 'node:zlib';
import type { GitBatchReader } from '../core/sandbox/git-batch.js';

/** The sha of a blob holding `bytes`, as `git hash-object --no-filters` computes it. */
export function blobSha(bytes: Buffer): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/**
 * Writes a loose object (zlib of `<type> <size>\0<body>`) into `objectsDir` unless it is there already,
 * through a temporary file and a rename, read-only as git leaves it. No fsync: git's default
 * (core.fsync) does not sync loose objects either.
 */
export function writeLooseObject(objectsDir: string, type: 'blob' | 'commit', body: Buffer): string {
  const full = Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]);
  const sha = createHash('sha1').update(full).digest('hex');
  const dir = join(objectsDir, sha.slice(0, 2));
  const file = join(dir, sha.slice(2));
  if (fs.existsSync(file)) return sha;
  fs.mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `tmp_obj_acia_${randomBytes(6).toString('hex')}`);
  fs.writeFileSync(tmp, deflateSync(full), { mode: 0o444, flag: 'wx' });
  fs.renameSync(tmp, file);
  return sha;
}

/** The body of a commit as `git commit-tree <tree> -p <parent> -F -` writes it (message as given). */
export function commitBody(tree: string, parents: readonly string[], ident: string, when: Date, message: string): Buffer {
  const stamp = `${ident} ${Math.floor(when.getTime() / 1000)} +0000`;
  const head = [`tree ${tree}`, ...parents.map((p) => `parent ${p}`), `author ${stamp}`, `committer ${stamp}`].join('\n');
  return Buffer.from(`${head}\n\n${message}`, 'utf8');
}

/** The objects directory shared by every worktree of the repository whose git dir is `gitDir`. */
export function objectsDirOf(gitDir: string): string {
  let common = gitDir;
  try {
    common = resolve(gitDir, fs.readFileSync(join(gitDir, 'commondir'), 'utf8').trim());
  } catch {
    // No commondir file: the git dir is the common dir.
  }
  return join(common, 'objects');
}

interface TreeEntry {
  mode: string;
  /** Raw name bytes as latin1 (one char per byte). */
  name: string;
  sha: string;
}

function parseTree(content: Buffer): TreeEntry[] {
  const out: TreeEntry[] = [];
  let i = 0;
  while (i < content.length) {
    const sp = content.indexOf(0x20, i);
    const nul = content.indexOf(0, sp + 1);
    if (sp < 0 || nul < 0 || nul + 21 > content.length) throw new Error('malformed tree object');
    out.push({ mode: content.toString('latin1', i, sp), name: content.toString('latin1', sp + 1, nul), sha: content.toString('hex', nul + 1, nul + 21) });
    i = nul + 21;
  }
  return out;
}

const isTree = (mode: string): boolean => mode === '40000';
const isGitlink = (mode: string): boolean => mode === '160000';
/** Git's tree order: a directory sorts as if its name ended in '/', anything else as if in NUL. */
const sortKey = (e: TreeEntry): string => e.name + (isTree(e.mode) ? '/' : '\0');

/** The tree a commit (or a tree) names, by sha or any name cat-file resolves; null when missing. */
export async function treeOf(reader: GitBatchReader, name: string): Promise<string | null> {
  const o = await reader.read(name);
  if (o === null) return null;
  if (o.type === 'tree') return o.sha;
  if (o.type !== 'commit') return null;
  const m = /^tree ([0-9a-f]{40,64})\n/.exec(o.content.toString('latin1', 0, 80));
  return m ? m[1]! : null;
}

/**
 * `git diff --name-only -z --no-renames --ignore-submodules=all <a> <b>` between two commits or trees,
 * computed from the tree objects: paths in git's order, decoded as UTF-8 as the diff's output was.
 * Gitlinks never count (added, removed or moved), as --ignore-submodules=all has it.
 */
export async function changedPaths(reader: GitBatchReader, a: string, b: string): Promise<string[]> {
  const [ta, tb] = await Promise.all([treeOf(reader, a), treeOf(reader, b)]);
  if (ta === null || tb === null) throw new Error(`cannot read the trees of ${a} and ${b}`);
  const out: string[] = [];
  await diffTrees(reader, ta, tb, '', out);
  return out.map((p) => Buffer.from(p, 'latin1').toString('utf8'));
}

/**
 * `git ls-tree -r -z --name-only <commit>` from the tree objects: every path that is not a tree (files,
 * symlinks, gitlinks) in git's order, decoded as UTF-8. The subtrees are asked for all at once, so the
 * reads queue on the pipe instead of waiting on each other. Null for a SHA-256 repository (the tree
 * parser reads 20-byte ids) or a missing commit: ask `ls-tree` then.
 */
export async function listTreePaths(reader: GitBatchReader, commit: string): Promise<string[] | null> {
  const root = await treeOf(reader, commit);
  if (root === null || root.length !== 40) return null;
  const walk = async (tree: string, prefix: string): Promise<string[]> => {
    const entries = await entriesOf(reader, tree);
    const parts = await Promise.all(entries.map((e) => (isTree(e.mode) ? walk(e.sha, `${prefix}${e.name}/`) : Promise.resolve([prefix + e.name]))));
    return parts.flat();
  };
  return (await walk(root, '')).map((p) => Buffer.from(p, 'latin1').toString('utf8'));
}

async function entriesOf(reader: GitBatchReader, tree: string | null): Promise<TreeEntry[]> {
  if (tree === null) return [];
  const o = await reader.read(tree);
  if (o === null || o.type !== 'tree') throw new Error(`tree ${tree} is missing`);
  return parseTree(o.content);
}

async function diffTrees(reader: GitBatchReader, a: string | null, b: string | null, prefix: string, out: string[]): Promise<void> {
  if (a === b) return;
  const [ea, eb] = await Promise.all([entriesOf(reader, a), entriesOf(reader, b)]);
  let i = 0;
  let j = 0;
  while (i < ea.length || j < eb.length) {
    const x = ea[i];
    const y = eb[j];
    const cmp = x === undefined ? 1 : y === undefined ? -1 : compareKeys(sortKey(x), sortKey(y));
    if (cmp === 0 && x !== undefined && y !== undefined) {
      i++;
      j++;
      if (isTree(x.mode)) await diffTrees(reader, x.sha, y.sha, `${prefix}${x.name}/`, out);
      else if (!(isGitlink(x.mode) && isGitlink(y.mode)) && (x.sha !== y.sha || x.mode !== y.mode)) out.push(prefix + x.name);
    } else {
      const only = cmp < 0 ? x! : y!;
      if (cmp < 0) i++;
      else j++;
      if (isTree(only.mode)) await diffTrees(reader, cmp < 0 ? only.sha : null, cmp < 0 ? null : only.sha, `${prefix}${only.name}/`, out);
      else if (!isGitlink(only.mode)) out.push(prefix + only.name);
    }
  }
}

/** Byte order of latin1 strings (each char one byte), as git compares names. */
function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
