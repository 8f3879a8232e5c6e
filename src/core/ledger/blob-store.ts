// The content-addressed blob store beside a run's ledger: `blobs/<sha256 hex>`, written once, deduplicated.
import { join } from 'node:path';
import { CONTENT_REF, sha256Hex } from '../acm/canonical-json.js';
import { AciaError } from '../errors.js';
import { errnoCode, syncDir, type LedgerFs } from './ledger-fs.js';

export interface BlobStoreOptions {
  /**
   * Leave the directory fsync that makes a blob's rename durable to syncPending(), which the owner calls
   * before it makes durable anything that refers to the blob (the file ledger does, before each of its
   * fsyncs). One directory fsync then covers every blob of a turn instead of one each (about 1 ms apiece).
   */
  deferDirSync?: boolean;
}

export class BlobStore {
  private tmpCounter = 0;
  /** A rename since the last directory fsync (deferDirSync only). */
  private dirDirty = false;
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
   * Durable before it resolves: temp file, fsync, rename, fsync of the directory (with deferDirSync, the
   * directory's fsync waits for syncPending()).
   */
  async put(content: string | Uint8Array): Promise<string> {
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    const hex = sha256Hex(bytes);
    const path = join(this.dir, hex);
    if (await exists(this.fs, path)) return `sha256:${hex}`;
    const tmp = join(this.dir, `.${hex}.${process.pid}.${(this.tmpCounter += 1)}.tmp`);
    try {
      if (!this.dirMade) await this.fs.mkdir(this.dir, { recursive: true });
      this.dirMade = true;
      const handle = await this.fs.open(tmp, 'wx');
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await this.fs.rename(tmp, path);
      if (this.options.deferDirSync) this.dirDirty = true;
      else await syncDir(this.fs, this.dir);
    } catch (e) {
      this.dirMade = false; // the directory may be what went missing
      await this.fs.unlink(tmp).catch(() => undefined);
      throw new AciaError('LEDGER_IO', `cannot write blob ${path}: ${(e as Error).message}`, { cause: e });
    }
    return `sha256:${hex}`;
  }

  /** Makes every blob renamed so far durable (one fsync of the directory); a no-op when none was. */
  async syncPending(): Promise<void> {
    if (!this.dirDirty) return;
    // Cleared first: a rename that lands while the fsync runs sets it again for the next call.
    this.dirDirty = false;
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

async function exists(fs: LedgerFs, path: string): Promise<boolean> {
  try {
    await fs.stat(path);
    return true;
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return false;
    throw e;
  }
}
