// The filesystem seam of the ledger: the few promise-based calls it makes, so tests can inject failures.
import { constants as nodeConstants } from 'node:fs';
import * as nodeFs from 'node:fs/promises';

export type LedgerFs = Pick<
  typeof nodeFs,
  'open' | 'mkdir' | 'readFile' | 'writeFile' | 'rename' | 'unlink' | 'link' | 'stat' | 'readdir' | 'rm'
>;

export const nodeLedgerFs: LedgerFs = nodeFs;

export function errnoCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? String((e).code) : undefined;
}

/** fsync a directory so a created or renamed entry in it survives a crash. Best effort where unsupported. */
export async function syncDir(fs: LedgerFs, dir: string): Promise<void> {
  let handle: nodeFs.FileHandle | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch (e) {
    // Some platforms refuse fsync on directories (EISDIR/EINVAL/EPERM); the data files themselves are synced.
    const code = errnoCode(e);
    if (code !== 'EISDIR' && code !== 'EINVAL' && code !== 'EPERM' && code !== 'EBADF') throw e;
  } finally {
    await handle?.close();
  }
}

const NO_FOLLOW_READ = nodeConstants.O_RDONLY | nodeConstants.O_NOFOLLOW | nodeConstants.O_NONBLOCK;

/**
 * A run file's bytes (manifest, blob), opened without following a link and without waiting on a FIFO: a
 * clone may have planted either under `.acia/runs`. A link is ELOOP and a special file EINVAL-like
 * `NOT_REGULAR`, both thrown as errors whose `code` says so; ENOENT passes through.
 */
export async function readFileNoFollow(fs: LedgerFs, path: string): Promise<Buffer> {
  const handle = await fs.open(path, NO_FOLLOW_READ);
  try {
    if (!(await handle.stat()).isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: 'NOT_REGULAR' });
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}
