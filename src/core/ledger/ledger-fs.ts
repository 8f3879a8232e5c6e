// The filesystem seam of the ledger: the few promise-based calls it makes, so tests can inject failures.
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
