// Reading and creating paths under a repository's `.acia/` without following links. The checkout may be a
// hostile clone: a memory page that is a symlink to ~/.ssh/id_rsa, or a `.acia/worktrees` symlink that
// moves worktrees out of the repo, must be refused, not followed. Every component below the repository
// root is lstat-ed; files are opened with O_NOFOLLOW (and O_NONBLOCK, so a FIFO cannot hang the open)
// and must be regular files.
import { constants, lstatSync, mkdirSync, openSync, closeSync, fstatSync, readSync, writeSync, fsyncSync, renameSync, unlinkSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { AciaError, errorMessage } from '../errors.js';

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

function unsafe(path: string, what: string): AciaError {
  return new AciaError('UNSAFE_REPO', `refusing ${path}: ${what}`, {
    hint: 'ACIA keeps its own state under .acia/ as plain files and directories; remove the entry (a repository must not ship links or special files there)',
  });
}

function kindOf(path: string): 'missing' | 'dir' | 'file' | 'symlink' | 'other' {
  try {
    const st = lstatSync(path);
    return st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw new AciaError('LEDGER_IO', `cannot inspect ${path}: ${errorMessage(e)}`, { cause: e });
  }
}

/** The components from `root` (exclusive) down to `target`, each a full path. */
function chain(root: string, target: string): string[] {
  const rel = relative(root, target);
  if (rel === '') return [];
  if (rel.startsWith('..') || rel.startsWith(sep)) throw new AciaError('PATH_OUTSIDE_ROOT', `${target} is not inside ${root}`);
  const out: string[] = [];
  let at = root;
  for (const part of rel.split(sep)) {
    at = join(at, part);
    out.push(at);
  }
  return out;
}

/**
 * Checks that every existing component of `dir` below `root` is a real directory (no symlink, no file).
 * Returns false when some component does not exist yet.
 */
export function checkRealDir(root: string, dir: string): boolean {
  for (const p of chain(root, dir)) {
    const k = kindOf(p);
    if (k === 'missing') return false;
    if (k !== 'dir') throw unsafe(p, k === 'symlink' ? 'it is a symbolic link, not a directory' : 'it is not a directory');
  }
  return true;
}

/** Creates `dir` and its parents below `root` as real directories; an existing link or file on the way is refused. */
export function ensureRealDir(root: string, dir: string): void {
  for (const p of chain(root, dir)) {
    const k = kindOf(p);
    if (k === 'dir') continue;
    if (k !== 'missing') throw unsafe(p, k === 'symlink' ? 'it is a symbolic link, not a directory' : 'it is not a directory');
    try {
      mkdirSync(p);
    } catch (e) {
      // Another process made it in between: accept it only if it is a real directory.
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || kindOf(p) !== 'dir') throw new AciaError('LEDGER_IO', `cannot create ${p}: ${errorMessage(e)}`, { cause: e });
    }
  }
}

/**
 * A regular file's bytes, or null when it does not exist. The directories from `root` down are checked
 * first; the file itself is opened without following a link and must be a regular file.
 */
export function readRegularFile(root: string, path: string, maxBytes = 64 * 1024 * 1024): Buffer | null {
  const parts = chain(root, path);
  const parent = parts.at(-2) ?? root;
  if (!checkRealDir(root, parent)) return null;
  const read = readRegularAt(path, maxBytes);
  if (read === 'missing') return null;
  if (read === 'symlink') throw unsafe(path, 'it is a symbolic link, not a regular file');
  if (read === 'not-regular') throw unsafe(path, 'it is not a regular file');
  if (read === 'too-large') throw unsafe(path, `it is larger than ${maxBytes} bytes`);
  return read.content;
}

/**
 * The file at `path` itself, for callers that checked its directories already: its bytes and identity
 * when it is a regular file (opened without following a link and without waiting on a FIFO), or why not.
 */
export function readRegularAt(path: string, maxBytes = 64 * 1024 * 1024): { content: Buffer; dev: number; ino: number; uid: number } | 'missing' | 'symlink' | 'not-regular' | 'too-large' {
  let fd: number;
  try {
    fd = openSync(path, READ_FLAGS);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'missing';
    if (code === 'ELOOP') return 'symlink';
    throw new AciaError('LEDGER_IO', `cannot read ${path}: ${errorMessage(e)}`, { cause: e });
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return 'not-regular';
    if (st.size > maxBytes) return 'too-large';
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, off);
      if (n === 0) break;
      off += n;
    }
    return { content: buf.subarray(0, off), dev: st.dev, ino: st.ino, uid: st.uid };
  } finally {
    closeSync(fd);
  }
}

/**
 * Replaces `path` atomically with `content`: a fresh temp file (O_EXCL|O_NOFOLLOW, so a planted link at the
 * temp name is never written through), fsync, rename. rename replaces a link at `path` itself rather than
 * writing through it. The directories from `root` down are created as real directories.
 */
export function writeRegularFile(root: string, path: string, content: string | Buffer): void {
  const parts = chain(root, path);
  ensureRealDir(root, parts.at(-2) ?? root);
  if (kindOf(path) === 'dir') throw unsafe(path, 'it is a directory, not a file');
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  let fd: number;
  try {
    fd = openSync(tmp, CREATE_FLAGS, 0o644);
  } catch (e) {
    throw new AciaError('LEDGER_IO', `cannot write ${path}: ${errorMessage(e)}`, { cause: e });
  }
  try {
    const buf = typeof content === 'string' ? Buffer.from(content) : content;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    unlinkSafe(tmp);
    throw new AciaError('LEDGER_IO', `cannot write ${path}: ${errorMessage(e)}`, { cause: e });
  }
  closeSync(fd);
  try {
    renameSync(tmp, path);
  } catch (e) {
    unlinkSafe(tmp);
    throw new AciaError('LEDGER_IO', `cannot write ${path}: ${errorMessage(e)}`, { cause: e });
  }
}

function unlinkSafe(p: string): void {
  try {
    unlinkSync(p);
  } catch {
    // Already gone.
  }
}

/** Refuses `path` when it exists and is anything but a regular file (or, with `dir`, a real directory). */
export function checkRegularOrMissing(path: string, dir = false): void {
  const k = kindOf(path);
  if (k === 'missing' || k === (dir ? 'dir' : 'file')) return;
  throw unsafe(path, k === 'symlink' ? 'it is a symbolic link' : dir ? 'it is not a directory' : 'it is not a regular file');
}

/**
 * A descriptor for reading the regular file at `path`, opened without following a link and without waiting
 * on a FIFO; null when it does not exist. For streaming readers (a run's ledger) that cannot take the whole
 * file at once; the caller closes it (a read stream given `fd` does so when it ends).
 */
export function openRegularForRead(path: string): number | null {
  let fd: number;
  try {
    fd = openSync(path, READ_FLAGS);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw unsafe(path, 'it is a symbolic link, not a regular file');
    throw new AciaError('LEDGER_IO', `cannot read ${path}: ${errorMessage(e)}`, { cause: e });
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw unsafe(path, 'it is not a regular file');
  }
  return fd;
}
