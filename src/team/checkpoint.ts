// A checkpoint commit of an agent's worktree built with plumbing that applies no filters and enters no
// nested repository: `git add -A` would run clean filters and `git status` inside any nested repo the
// agent made, outside the sandbox. Here every blob is hashed with --no-filters from bytes ACIA read itself.
import * as fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Git } from './git.js';

const ACIA_DIR = '.acia';

interface Entry {
  mode: string;
  sha: string;
}

/**
 * Commits the worktree at `cwd` onto HEAD; null when its tree equals HEAD's. Tracked files ignored by
 * .gitignore stay tracked (as `git add -A` does); `.acia/` keeps the base version whatever the agent did,
 * so a run branch never carries ACIA's own state or a planted config; gitlinks keep their recorded commit.
 */
export async function checkpointCommit(git: Git, cwd: string, message: string, expectedGitDir?: string, excludes: readonly string[] = []): Promise<string | null> {
  const o = expectedGitDir === undefined ? {} : { expectedGitDir };
  removeNestedGitEntries(cwd);
  const tree = await worktreeTree(git, cwd, o, excludes);
  const headTree = (await git.run(cwd, ['rev-parse', 'HEAD^{tree}'], o)).stdout;
  if (tree === headTree) return null;
  const head = (await git.run(cwd, ['rev-parse', 'HEAD'], o)).stdout;
  const commit = (await git.run(cwd, ['commit-tree', tree, '-p', head, '-F', '-'], { ...o, input: message })).stdout;
  await git.run(cwd, ['update-ref', '-m', 'acia: checkpoint', 'HEAD', commit, head], o);
  // The real index follows the new commit; nothing in the worktree is touched.
  await git.run(cwd, ['read-tree', commit], o);
  return commit;
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
