// The content-addressed blob store beside a run's ledger: `blobs/<sha256 hex>`, written once, deduplicated.
import { join } from 'node:path';
import { CONTENT_REF, sha256Hex } from '../acm/canonical-json.js';
import { AciaError } from '../errors.js';
import { errnoCode, syncDir, type LedgerFs } from './ledger-fs.js';

export interface BlobStoreOptions {
  /**
   * Leave the fsyncs that make a blob durable (its file's, then the directory's) to syncPending(), which
   * the owner calls before it makes durable anything that refers to the blob (the file ledger does, before
   * each of its group commits). A put then waits for no fsync at all, and one batch of fsyncs, run side by
   * side, covers every blob of the commit instead of two in a row per blob (about 1.5 ms apiece here).
   */
  deferSync?: boolean;
}

export class BlobStore {
  private tmpCounter = 0;
  /** A rename since the last directory fsync (deferSync only). */
  private dirDirty = false;
  /** Blobs written since the last syncPending() whose data is not yet fsynced (deferSync only). */
  private unsynced = new Set<string>();
  private dirMade = false;
  constructor(
    readonly dir: string,
    private readonly fs: LedgerFs,
    private readonly options: BlobStoreOptions = {},
  ) {}

  pathOf(ref: string): string {
    return join(this.dir, hexOf(ref));
  }

  /**
   * Durable before it resolves: temp file, fsync, rename, fsync of the directory (with deferSync, both
   * fsyncs wait for syncPending()). A blob already there is kept when its size is right: a file cut short
   * by a power loss before its deferred fsync (no durable entry can name it) is written again.
   */
  async put(content: string | Uint8Array): Promise<string> {
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    const hex = sha256Hex(bytes);
    const path = join(this.dir, hex);
    if ((await sizeOf(this.fs, path)) === bytes.length) {
      // Maybe written by a session killed before its fsync: synced with this commit's blobs (cheap when clean).
      if (this.options.deferSync) {
        this.unsynced.add(path);
        this.dirDirty = true;
      }
      return `sha256:${hex}`;
    }
    const tmp = join(this.dir, `.${hex}.${process.pid}.${(this.tmpCounter += 1)}.tmp`);
    try {
      if (!this.dirMade) await this.fs.mkdir(this.dir, { recursive: true });
      this.dirMade = true;
      const handle = await this.fs.open(tmp, 'wx');
      try {
        await handle.writeFile(bytes);
        if (!this.options.deferSync) await handle.sync();
      } finally {
        await handle.close();
      }
      await this.fs.rename(tmp, path);
      if (this.options.deferSync) {
        this.unsynced.add(path);
        this.dirDirty = true;
      } else await syncDir(this.fs, this.dir);
    } catch (e) {
      this.dirMade = false; // the directory may be what went missing
      await this.fs.unlink(tmp).catch(() => undefined);
      throw new AciaError('LEDGER_IO', `cannot write blob ${path}: ${(e as Error).message}`, { cause: e });
    }
    return `sha256:${hex}`;
  }

  /**
   * Makes every blob written so far durable: each file's fsync (side by side), then one of the directory;
   * a no-op when none was written.
   */
  async syncPending(): Promise<void> {
    if (!this.dirDirty) return;
    // Taken first: a blob that lands while the fsyncs run is left for the next call.
    const files = [...this.unsynced];
    this.unsynced = new Set();
    this.dirDirty = false;
    try {
      await Promise.all(files.map((f) => syncFile(this.fs, f)));
    } catch (e) {
      for (const f of files) this.unsynced.add(f);
      this.dirDirty = true;
      throw new AciaError('LEDGER_IO', `cannot write blob ${this.dir}: ${(e as Error).message}`, { cause: e });
    }
    try {
      await syncDir(this.fs, this.dir);
    } catch (e) {
      this.dirDirty = true;
      throw new AciaError('LEDGER_IO', `cannot sync blob directory ${this.dir}: ${(e as Error).message}`, { cause: e });
    }
  }

  async get(ref: string): Promise<Buffer> {
    const path = this.pathOf(ref);
    try {
      return await this.fs.readFile(path);
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') throw new AciaError('BLOB_MISSING', `blob ${ref} is missing (${path})`);
      throw new AciaError('LEDGER_IO', `cannot read blob ${path}: ${(e as Error).message}`, { cause: e });
    }
  }
}

export function hexOf(ref: string): string {
  if (!CONTENT_REF.test(ref)) throw new AciaError('INPUT_INVALID', `not a blob reference: ${JSON.stringify(ref)}`);
  return ref.slice('sha256:'.length);
}

/** The file's size, or -1 when there is none. */
async function sizeOf(fs: LedgerFs, path: string): Promise<number> {
  try {
    return (await fs.stat(path)).size;
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return -1;
    throw e;
  }
}

async function syncFile(fs: LedgerFs, path: string): Promise<void> {
  const handle = await fs.open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
