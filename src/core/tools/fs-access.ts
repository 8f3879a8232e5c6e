// Guarded file access shared by the file tools: every path goes through the path guard at call time.
import * as nodeFs from 'node:fs';
import * as nodePath from 'node:path';
import { AciaError } from '../errors.js';
import { isWithin, resolveInRoot, type ResolvedPath } from '../sandbox/path-guard.js';
import type { ToolContext } from './types.js';

export const MAX_READ_BYTES = 4 * 1024 * 1024;
export const MAX_WRITE_BYTES = 2 * 1024 * 1024;

/**
 * True when the tools work on the disk (node's fs) rather than a test's in-memory one: then files open
 * with O_NONBLOCK|O_NOFOLLOW and search can hand off to ripgrep. Compared by a function, not the module
 * object: bundled as CommonJS, each chunk's `import * as fs` is its own wrapper around node's fs.
 */
export function onRealFs(ctx: ToolContext): boolean {
  return ctx.fs.openSync === nodeFs.openSync;
}

export function resolvePath(ctx: ToolContext, path: string): ResolvedPath {
  const view = ctx.viewRoot;
  if (view !== undefined && nodePath.isAbsolute(path) && !isWithin(nodePath.resolve(ctx.root), nodePath.resolve(path)) && isWithin(view, nodePath.resolve(path))) {
    return resolveInRoot(ctx.fs, ctx.root, nodePath.relative(view, nodePath.resolve(path)) || '.');
  }
  return resolveInRoot(ctx.fs, ctx.root, path);
}

/**
 * lstat of a path built from a name readdir returned. A name that is not valid UTF-8 comes back with
 * U+FFFD and cannot be reached by that string: null, so a walk marks or skips it instead of failing.
 */
export function lstatListed(ctx: ToolContext, abs: string): nodeFs.Stats | null {
  try {
    return ctx.fs.lstatSync(abs);
  } catch (e) {
    if (abs.includes('\uFFFD') && (e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

export function readTextFile(ctx: ToolContext, path: string): { resolved: ResolvedPath; text: string } {
  const resolved = resolvePath(ctx, path);
  if (!resolved.exists) throw new AciaError('FILE_NOT_FOUND', `${path} does not exist`);
  // Open first, then fstat the open file: a FIFO opened non-blocking cannot stall the process (a blocking
  // read on it would freeze ACIA, Ctrl-C included), and what is checked is what is read.
  const fd = openNoBlock(ctx, resolved.abs, 'read', path);
  try {
    const st = ctx.fs.fstatSync(fd);
    if (st.isDirectory()) throw new AciaError('INPUT_INVALID', `${path} is a directory; use list_dir`);
    requireRegular(st, path);
    if (st.size > MAX_READ_BYTES) {
      throw new AciaError('INPUT_INVALID', `${path} is ${st.size} bytes, over the ${MAX_READ_BYTES}-byte read limit`);
    }
    const buf = ctx.fs.readFileSync(fd);
    if (buf.subarray(0, 8192).includes(0)) throw new AciaError('INPUT_INVALID', `${path} looks binary (contains NUL bytes)`);
    return { resolved, text: buf.toString('utf8') };
  } finally {
    ctx.fs.closeSync(fd);
  }
}

function requireRegular(st: nodeFs.Stats, path: string): void {
  if (!st.isFile()) throw new AciaError('INPUT_INVALID', `${path} is not a regular file (a FIFO, socket or device); file tools only open regular files`);
}

/** O_NONBLOCK|O_NOFOLLOW on the real filesystem; a writer opening a FIFO with no reader gets ENXIO, not a hang. */
function openNoBlock(ctx: ToolContext, abs: string, mode: 'read' | 'write', shown: string): number {
  const c = ctx.fs.constants ?? nodeFs.constants;
  const real = onRealFs(ctx);
  const base = mode === 'read' ? c.O_RDONLY : c.O_WRONLY | c.O_CREAT;
  try {
    return ctx.fs.openSync(abs, base | (real ? c.O_NONBLOCK | c.O_NOFOLLOW : 0), 0o644);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENXIO' || code === 'ENODEV') throw new AciaError('INPUT_INVALID', `${shown} is not a regular file (a FIFO, socket or device); file tools only open regular files`);
    if (code === 'ELOOP') throw new AciaError('PATH_OUTSIDE_ROOT', `${shown} changed into a symlink while being opened`);
    throw e;
  }
}

/**
 * Writes through the guard. The final open uses O_NOFOLLOW|O_NONBLOCK so a symlink swapped in after the
 * check is not followed and a FIFO cannot block (real fs); directories are created only below the resolved, in-root parent.
 */
export function writeTextFile(ctx: ToolContext, path: string, content: string): ResolvedPath {
  const bytes = Buffer.byteLength(content, 'utf8');
  if (bytes > MAX_WRITE_BYTES) throw new AciaError('INPUT_INVALID', `content is ${bytes} bytes, over the ${MAX_WRITE_BYTES}-byte write limit`);
  const resolved = resolvePath(ctx, path);
  if (resolved.rel === '') throw new AciaError('INPUT_INVALID', 'cannot write to the worktree root itself');
  if (resolved.exists && ctx.fs.lstatSync(resolved.abs).isDirectory()) throw new AciaError('INPUT_INVALID', `${path} is a directory`);
  ctx.fs.mkdirSync(nodePath.dirname(resolved.abs), { recursive: true });
  // Re-check after mkdir: a directory swapped for a symlink in between would show up here.
  const again = resolvePath(ctx, path);
  if (again.abs !== resolved.abs) throw new AciaError('PATH_OUTSIDE_ROOT', `${path} changed while being written`);
  const fd = openNoBlock(ctx, resolved.abs, 'write', path);
  try {
    // Truncate only once the open file is known to be a regular file.
    requireRegular(ctx.fs.fstatSync(fd), path);
    ctx.fs.ftruncateSync(fd, 0);
    ctx.fs.writeSync(fd, content);
  } finally {
    ctx.fs.closeSync(fd);
  }
  return resolved;
}
