// A checkpoint commit of an agent's worktree built with plumbing that applies no filters and enters no
// nested repository: `git add -A` would run clean filters and `git status` inside any nested repo the
// agent made, outside the sandbox. Here every blob is hashed with --no-filters from bytes ACIA read itself.
import * as fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { AciaError } from '../core/errors.js';
import { GitBatchReader } from '../core/sandbox/git-batch.js';
import { blobSha, commitBody, objectsDirOf, treeOf, writeLooseObject } from './git-objects.js';
import type { Git } from './git.js';

const ACIA_DIR = '.acia';

interface Entry {
  mode: string;
  sha: string;
}

/** What a task checkpoint reuses across calls: the run's object reader and the repository's object store. */
export interface CheckpointObjects {
  reader: GitBatchReader;
  /** `<common git dir>/objects`, where blobs and the commit are written as loose objects. */
  objectsDir: string;
}

/** Files past this size are hashed by git (streamed) instead of read into memory here. */
const IN_PROCESS_BLOB_LIMIT = 32 * 1024 * 1024;
const IDENT = 'ACIA <acia@localhost>';
const ZERO = '0'.repeat(40);

/**
 * Commits the worktree at `cwd` onto HEAD; null when its tree equals HEAD's. Tracked files ignored by
 * .gitignore stay tracked (as `git add -A` does); `.acia/` keeps the base version whatever the agent did,
 * so a run branch never carries ACIA's own state or a planted config; gitlinks keep their recorded commit.
 *
 * Four git processes: one listing of the index and the untracked files, one `update-index` of the
 * worktree's own index with what changed on disk (so it follows the commit, as `read-tree` made it before),
 * `write-tree`, and `update-ref` (compare-and-swap against the HEAD read before). Blobs and the commit are
 * hashed and written here from bytes ACIA read itself (no filters), HEAD and its tree come from `objects`.
 */
export async function checkpointCommit(git: Git, cwd: string, message: string, expectedGitDir?: string, excludes: readonly string[] = [], objects?: CheckpointObjects): Promise<string | null> {
  const o = expectedGitDir === undefined ? {} : { expectedGitDir };
  removeNestedGitEntries(cwd);
  const own = objects === undefined ? { reader: new GitBatchReader(cwd), objectsDir: null } : objects;
  try {
    const head = await readHead(git, cwd, o, own.reader);
    // Loose objects are written here only for SHA-1 repositories whose object store ACIA found.
    const objectsDir = own.objectsDir ?? (head.sha.length === 40 ? await objectsDirFor(git, cwd, o) : null);
    const raw = { ...o, encoding: 'latin1' as const };
    // -t tags each record (`?` untracked, a letter for index entries), so no file name can pass for an entry.
    const listing = (await git.run(cwd, ['ls-files', '-z', '-t', '-s', '-o', '--exclude-standard', '--', '.', ...excludes], raw)).stdout;
    const { indexed, untracked } = parseListing(listing);
    const lines = await indexUpdates(git, cwd, o, indexed, untracked, head.sha.length === 40 ? objectsDir : null);
    if (lines.length > 0) {
      // Removals first: a file may have become a directory, or the other way round.
      lines.sort((a, b) => Number(b.startsWith('0 ')) - Number(a.startsWith('0 ')));
      await git.run(cwd, ['update-index', '--add', '--replace', '-z', '--index-info'], { ...o, input: Buffer.from(lines.join(''), 'latin1') });
    }
    const tree = (await git.run(cwd, ['write-tree'], o)).stdout;
    if (tree === head.tree) return null;
    const when = git.now();
    const commit =
      objectsDir !== null && head.sha.length === 40
        ? writeLooseObject(objectsDir, 'commit', commitBody(tree, [head.sha], IDENT, when, message))
        : (await git.run(cwd, ['commit-tree', tree, '-p', head.sha, '-F', '-'], { ...o, input: message })).stdout;
    await git.run(cwd, ['update-ref', '-m', 'acia: checkpoint', 'HEAD', commit, head.sha], o);
    return commit;
  } finally {
    if (objects === undefined) own.reader.close();
  }
}

/**
 * HEAD of the worktree and its tree. The worktree's HEAD file names its branch, read through the run's
 * object reader; a detached or unusual HEAD is asked of git.
 */
async function readHead(git: Git, cwd: string, o: { expectedGitDir?: string }, reader: GitBatchReader): Promise<{ sha: string; tree: string }> {
  let name: string | null = null;
  if (o.expectedGitDir !== undefined) {
    try {
      const text = fs.readFileSync(join(o.expectedGitDir, 'HEAD'), 'utf8');
      const m = /^ref: (refs\/heads\/[^\s]+)\n?$/.exec(text) ?? /^([0-9a-f]{40}|[0-9a-f]{64})\n?$/.exec(text);
      name = m?.[1] ?? null;
    } catch {
      name = null;
    }
  }
  const sha = name !== null ? (await reader.read(name))?.sha : undefined;
  const headSha = sha ?? (await git.run(cwd, ['rev-parse', 'HEAD'], o)).stdout;
  const tree = await treeOf(reader, headSha);
  if (tree === null) throw new AciaError('INTERNAL', `cannot read the tree of HEAD (${headSha}) in ${cwd}`);
  return { sha: headSha, tree };
}

async function objectsDirFor(git: Git, cwd: string, o: { expectedGitDir?: string }): Promise<string | null> {
  if (o.expectedGitDir !== undefined) return objectsDirOf(o.expectedGitDir);
  const r = await git.run(cwd, ['rev-parse', '--git-common-dir'], { ...o, allowFail: true });
  return r.exitCode === 0 ? join(isAbsolute(r.stdout) ? r.stdout : join(cwd, r.stdout), 'objects') : null;
}

interface IndexedEntry extends Entry {
  stage: number;
}

function parseListing(out: string): { indexed: Map<string, IndexedEntry>; untracked: string[] } {
  const indexed = new Map<string, IndexedEntry>();
  const untracked: string[] = [];
  for (const rec of out.split('\0')) {
    if (rec.startsWith('? ')) {
      const p = rec.slice(2);
      if (p !== '' && !p.endsWith('/')) untracked.push(p);
      continue;
    }
    const m = /^\S (\d{6}) ([0-9a-f]+) (\d)\t(.+)$/s.exec(rec);
    if (m) indexed.set(m[4]!, { mode: m[1]!, sha: m[2]!, stage: Number(m[3]) });
  }
  return { indexed, untracked };
}

/**
 * `--index-info` records that make the index hold the work tree as it is on disk: a new entry for each
 * path whose content or mode changed, a removal for each that is gone (or no longer a file). `.acia/`
 * and gitlinks keep their entry; a conflicted one (stages 1-3) is settled on its last stage.
 */
async function indexUpdates(git: Git, cwd: string, o: { expectedGitDir?: string }, indexed: Map<string, IndexedEntry>, untracked: string[], objectsDir: string | null): Promise<string[]> {
  const at = (p: string): Buffer => Buffer.concat([Buffer.from(`${cwd}/`), Buffer.from(p, 'latin1')]);
  const lines: string[] = [];
  const put = (path: string, mode: string, sha: string): void => {
    const base = indexed.get(path);
    if (base?.mode === mode && base.sha === sha && base.stage === 0) return;
    if (base !== undefined && base.stage !== 0) lines.push(`0 ${ZERO}\t${path}\0`);
    lines.push(`${mode} ${sha}\t${path}\0`);
  };
  const remove = (path: string): void => {
    if (indexed.has(path)) lines.push(`0 ${ZERO}\t${path}\0`);
  };
  const viaGit: { path: string; mode: string; bytes?: Buffer }[] = [];
  const symlinkDirs = new Map<string, boolean>();
  const seen = new Set<string>();
  for (const path of [...indexed.keys(), ...untracked]) {
    if (seen.has(path)) continue;
    seen.add(path);
    const base = indexed.get(path);
    if (isAciaPath(path) || base?.mode === '160000') {
      if (base !== undefined && base.stage !== 0) put(path, base.mode, base.sha);
      continue;
    }
    if (underSymlink(path, at, symlinkDirs)) {
      remove(path); // a directory swapped for a link: its files are gone
      continue;
    }
    let st: fs.Stats;
    try {
      st = fs.lstatSync(at(path));
    } catch {
      remove(path); // deleted
      continue;
    }
    if (st.isSymbolicLink()) {
      const target = fs.readlinkSync(at(path), { encoding: 'buffer' });
      if (objectsDir !== null) put(path, '120000', storeBlob(target, objectsDir, base?.sha));
      else viaGit.push({ path, mode: '120000', bytes: target });
    } else if (st.isFile()) {
      const mode = st.mode & 0o100 ? '100755' : '100644';
      const bytes = objectsDir !== null && st.size <= IN_PROCESS_BLOB_LIMIT ? readFileNoFollow(at(path)) : undefined;
      if (bytes === null) remove(path); // swapped for a link, a FIFO or nothing since the lstat
      else if (bytes !== undefined && objectsDir !== null) put(path, mode, storeBlob(bytes, objectsDir, base?.sha));
      else viaGit.push({ path, mode });
    } else remove(path); // a directory where a file was, a FIFO, a socket: not content
  }
  // --stdin-paths reads lines and C-unquotes a leading quote: such names (and link targets) are piped in.
  const byPath = viaGit.filter((f) => f.bytes === undefined && !f.path.includes('\n') && !f.path.startsWith('"'));
  const hashed = await hashFiles(git, cwd, byPath.map((f) => f.path), o);
  for (const f of viaGit) {
    const sha = hashed.get(f.path) ?? (await git.run(cwd, ['hash-object', '-w', '--no-filters', '--stdin'], { ...o, input: f.bytes ?? fs.readFileSync(at(f.path)) })).stdout;
    put(f.path, f.mode, sha);
  }
  return lines;
}

/**
 * A regular file's bytes, read without following a link and without blocking on a FIFO (the agent may
 * swap the file between the lstat and this open); null when it is no longer a regular file.
 */
function readFileNoFollow(path: Buffer): Buffer | null {
  let fd: number;
  try {
    fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    if (!fs.fstatSync(fd).isFile()) return null;
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** The blob's sha, written to the object store unless the index already has exactly this content there. */
function storeBlob(bytes: Buffer, objectsDir: string, indexSha: string | undefined): string {
  const sha = blobSha(bytes);
  if (sha !== indexSha) writeLooseObject(objectsDir, 'blob', bytes);
  return sha;
}

/**
 * The tree of the work tree at `cwd` as it is on disk: index paths and untracked, unignored files, each
 * read by ACIA (no filters, no nested repository entered); gitlinks and `.acia/` keep their index entry.
 * Writes blobs, touches neither the index nor the work tree.
 */
export async function worktreeTree(git: Git, cwd: string, o: { expectedGitDir?: string } = {}, excludes: readonly string[] = []): Promise<string> {
  // Names are byte strings (latin1: one char per byte) so a name that is not UTF-8 survives intact.
  const raw = { ...o, encoding: 'latin1' as const };
  const indexed = parseStage((await git.run(cwd, ['ls-files', '-z', '-s'], raw)).stdout);
  // Paths the excludes (installed dependencies, setup outputs) leave out keep their index entry as is.
  const considered = excludes.length === 0 ? null : new Set(parseStage((await git.run(cwd, ['ls-files', '-z', '-s', '--', '.', ...excludes], raw)).stdout).keys());
  const untracked = (await git.run(cwd, ['ls-files', '-z', '-o', '--exclude-standard', '--', '.', ...excludes], raw)).stdout.split('\0').filter((p) => p !== '' && !p.endsWith('/'));
  const at = (p: string): Buffer => Buffer.concat([Buffer.from(`${cwd}/`), Buffer.from(p, 'latin1')]);
  const entries = new Map<string, Entry>();
  const toHash: string[] = [];
  const byStdin: { path: string; mode: string; bytes: Buffer }[] = [];
  const modes = new Map<string, string>();
  const symlinkDirs = new Map<string, boolean>();
  for (const path of [...indexed.keys(), ...untracked]) {
    if (entries.has(path) || modes.has(path)) continue;
    const base = indexed.get(path);
    if (isAciaPath(path) || base?.mode === '160000' || (base && considered && !considered.has(path))) {
      if (base) entries.set(path, base);
      continue;
    }
    if (underSymlink(path, at, symlinkDirs)) continue; // a directory swapped for a link: its files are gone
    let st: fs.Stats;
    try {
      st = fs.lstatSync(at(path));
    } catch {
      continue; // deleted
    }
    if (st.isSymbolicLink()) byStdin.push({ path, mode: '120000', bytes: fs.readlinkSync(at(path), { encoding: 'buffer' }) });
    else if (st.isFile()) {
      const mode = st.mode & 0o100 ? '100755' : '100644';
      modes.set(path, mode);
      // --stdin-paths reads lines and C-unquotes a leading quote: such names are read here and piped in.
      if (path.includes('\n') || path.startsWith('"')) byStdin.push({ path, mode, bytes: fs.readFileSync(at(path)) });
      else toHash.push(path);
    }
    // Anything else (a directory where a file was, a FIFO, a socket) is not content: left out.
  }
  for (const [path, sha] of await hashFiles(git, cwd, toHash, o)) entries.set(path, { mode: modes.get(path) ?? '100644', sha });
  for (const b of byStdin) {
    const sha = (await git.run(cwd, ['hash-object', '-w', '--no-filters', '--stdin'], { ...o, input: b.bytes })).stdout;
    entries.set(b.path, { mode: b.mode, sha });
  }

  const dir = await mkdtemp(join(tmpdir(), 'acia-ckpt-'));
  try {
    const env = { GIT_INDEX_FILE: join(dir, 'index') };
    const info = Buffer.from([...entries].map(([path, e]) => `${e.mode} ${e.sha}\t${path}\0`).join(''), 'latin1');
    await git.run(cwd, ['update-index', '--add', '-z', '--index-info'], { ...o, env, input: info });
    return (await git.run(cwd, ['write-tree'], { ...o, env })).stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function isAciaPath(path: string): boolean {
  return path === ACIA_DIR || path.startsWith(`${ACIA_DIR}/`);
}

function parseStage(out: string): Map<string, Entry> {
  const map = new Map<string, Entry>();
  for (const rec of out.split('\0')) {
    const m = /^(\d{6}) ([0-9a-f]+) \d\t(.+)$/s.exec(rec);
    if (m) map.set(m[3]!, { mode: m[1]!, sha: m[2]! });
  }
  return map;
}

/** True when a directory on the way to `path` is a symlink: reading through it would leave the worktree. */
function underSymlink(path: string, at: (p: string) => Buffer, cache: Map<string, boolean>): boolean {
  const parts = path.split('/');
  let prefix = '';
  for (let i = 0; i < parts.length - 1; i++) {
    prefix = prefix === '' ? parts[i]! : `${prefix}/${parts[i]!}`;
    let bad = cache.get(prefix);
    if (bad === undefined) {
      try {
        bad = !fs.lstatSync(at(prefix)).isDirectory();
      } catch {
        bad = true;
      }
      cache.set(prefix, bad);
    }
    if (bad) return true;
  }
  return false;
}

/** Blob ids of regular files (plain byte-string names), written with --no-filters through --stdin-paths. */
async function hashFiles(git: Git, cwd: string, paths: string[], o: { expectedGitDir?: string }): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let i = 0; i < paths.length; i += 5000) {
    const batch = paths.slice(i, i + 5000);
    const input = Buffer.from(`${batch.join('\n')}\n`, 'latin1');
    const shas = (await git.run(cwd, ['hash-object', '-w', '--no-filters', '--stdin-paths'], { ...o, input })).stdout.split('\n');
    batch.forEach((p, j) => out.set(p, shas[j] ?? ''));
  }
  return out;
}

/**
 * Every `.git` entry below the worktree root (a nested repository or a gitlink the agent filled) is
 * removed before host git looks at the worktree: git would otherwise treat it as a repository of its own,
 * with the agent's config. Symlinks are not followed.
 */
export function removeNestedGitEntries(root: string): string[] {
  const removed: string[] = [];
  const walk = (dir: Buffer, top: boolean): void => {
    let names: fs.Dirent<Buffer>[];
    try {
      names = fs.readdirSync(dir, { withFileTypes: true, encoding: 'buffer' });
    } catch {
      return;
    }
    for (const d of names) {
      const abs = Buffer.concat([dir, Buffer.from('/'), d.name]);
      if (d.name.equals(DOT_GIT)) {
        if (top) continue;
        fs.rmSync(abs, { recursive: true, force: true });
        removed.push(abs.toString('utf8'));
      } else if (d.isDirectory()) walk(abs, false);
    }
  };
  walk(Buffer.from(root), true);
  return removed;
}

const DOT_GIT = Buffer.from('.git');
