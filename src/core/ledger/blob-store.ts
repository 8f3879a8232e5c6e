// The content-addressed blob store beside a run's ledger: `blobs/<sha256 hex>`, written once, deduplicated.
import { basename, join } from 'node:path';
import { CONTENT_REF, sha256Hex } from '../acm/canonical-json.js';
import { AciaError } from '../errors.js';
import type { FileHandle } from 'node:fs/promises';
import { errnoCode, readFileNoFollow, syncDir, type LedgerFs } from './ledger-fs.js';

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
  /**
   * Blobs written since the last syncPending() whose data is not yet fsynced (deferSync only), with the
   * handle they were written through when it is still open (fsynced and closed by syncPending()).
   */
  private unsynced = new Map<string, FileHandle | null>();
  private dirMade = false;
  /** Puts running now, by path: a second put of the same content waits for the first. */
  private readonly inFlight = new Map<string, Promise<string>>();
  /** Blobs this store wrote or found whole: nothing to check or write again. */
  private readonly stored = new Set<string>();
  constructor(
    readonly dir: string,
    private readonly fs: LedgerFs,
    private readonly options: BlobStoreOptions = {},
  ) {}

  /** The blobs (sha256 hex) this store wrote, or found holding exactly their bytes, since it was made. */
  written(): ReadonlySet<string> {
    return new Set([...this.stored].map((path) => basename(path)));
  }

  pathOf(ref: string): string {
    return join(this.dir, hexOf(ref));
  }

  /**
   * Durable before it resolves: temp file, fsync, rename, fsync of the directory. With deferSync, both
   * fsyncs wait for syncPending(), and a new blob is written under its final name at once (no entry can
   * name it before syncPending(), so a file a crash cut short is one no durable entry names). A blob
   * already there is kept only when it holds exactly these bytes (a crash before its fsync can leave one
   * cut short, or of the right size with other bytes); otherwise it is written again, through a temp file.
   * Puts of the same content at the same time share one write.
   */
  put(content: string | Uint8Array): Promise<string> {
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    const hex = sha256Hex(bytes);
    const path = join(this.dir, hex);
    const running = this.inFlight.get(path);
    if (running) return running;
    const put = this.putBytes(path, bytes).then(() => `sha256:${hex}`);
    this.inFlight.set(path, put);
    const done = (): void => void this.inFlight.delete(path);
    put.then(done, done);
    return put;
  }

  private async putBytes(path: string, bytes: Uint8Array): Promise<void> {
    // Written or checked by this store already: durable, or in the next syncPending().
    if (this.stored.has(path)) return;
    if (this.options.deferSync && (await this.putNew(path, bytes))) {
      this.stored.add(path);
      return;
    }
    if (await holds(this.fs, path, bytes).catch((e: unknown) => Promise.reject(blobError(path, e)))) {
      // Maybe written by a session killed before its fsync: synced with this commit's blobs (cheap when clean).
      if (this.options.deferSync) this.markUnsynced(path, null);
      this.stored.add(path);
      return;
    }
    const tmp = join(this.dir, `.${basename(path)}.${process.pid}.${(this.tmpCounter += 1)}.tmp`);
    try {
      await this.makeDir();
      const handle = await this.fs.open(tmp, 'wx');
      try {
        await handle.writeFile(bytes);
        if (!this.options.deferSync) await handle.sync();
      } finally {
        await handle.close();
      }
      await this.fs.rename(tmp, path);
      if (this.options.deferSync) this.markUnsynced(path, null);
      else await syncDir(this.fs, this.dir);
    } catch (e) {
      this.dirMade = false; // the directory may be what went missing
      await this.fs.unlink(tmp).catch(() => undefined);
      throw blobError(path, e);
    }
    this.stored.add(path);
  }

  /**
   * deferSync: writes a blob not yet on disk under its final name, keeping the handle for syncPending().
   * False when a file of that name is already there (the caller checks it).
   */
  private async putNew(path: string, bytes: Uint8Array): Promise<boolean> {
    let handle: FileHandle;
    try {
      await this.makeDir();
      handle = await this.fs.open(path, 'wx');
    } catch (e) {
      if (errnoCode(e) === 'EEXIST') return false;
      this.dirMade = false;
      throw blobError(path, e);
    }
    try {
      await handle.writeFile(bytes);
    } catch (e) {
      await handle.close().catch(() => undefined);
      // Ours (created with O_EXCL above) and named by nothing: a later put starts afresh.
      await this.fs.unlink(path).catch(() => undefined);
      throw blobError(path, e);
    }
    this.markUnsynced(path, handle);
    return true;
  }

  private markUnsynced(path: string, handle: FileHandle | null): void {
    const held = this.unsynced.get(path);
    if (held && held !== handle) void held.close().catch(() => undefined);
    this.unsynced.set(path, handle);
    this.dirDirty = true;
  }

  private async makeDir(): Promise<void> {
    if (!this.dirMade) await this.fs.mkdir(this.dir, { recursive: true });
    this.dirMade = true;
  }

  /**
   * Makes every blob written so far durable: each file's fsync (side by side), then one of the directory;
   * a no-op when none was written.
   */
  async syncPending(): Promise<void> {
    if (!this.dirDirty) return;
    // Taken first: a blob that lands while the fsyncs run is left for the next call.
    const files = [...this.unsynced];
    this.unsynced = new Map();
    this.dirDirty = false;
    const results = await Promise.allSettled(files.map(([path, handle]) => (handle ? syncHandle(handle) : syncFile(this.fs, path))));
    const failed = results.findIndex((r) => r.status === 'rejected');
    if (failed >= 0) {
      // Every handle is closed by now: a retry reopens by path.
      for (const [path] of files) this.unsynced.set(path, null);
      this.dirDirty = true;
      throw new AciaError('LEDGER_IO', `cannot write blob ${this.dir}: ${((results[failed] as PromiseRejectedResult).reason as Error).message}`, {
        cause: (results[failed] as PromiseRejectedResult).reason,
      });
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
      // A blob a clone planted as a link (to ~/.ssh/id_rsa) or a FIFO is refused, not read.
      return await readFileNoFollow(this.fs, path);
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') throw new AciaError('BLOB_MISSING', `blob ${ref} is missing (${path})`);
      if (errnoCode(e) === 'ELOOP' || errnoCode(e) === 'NOT_REGULAR') throw new AciaError('UNSAFE_REPO', `refusing blob ${path}: it is a link or not a regular file`);
      throw new AciaError('LEDGER_IO', `cannot read blob ${path}: ${(e as Error).message}`, { cause: e });
    }
  }
}

export function hexOf(ref: string): string {
  if (!CONTENT_REF.test(ref)) throw new AciaError('INPUT_INVALID', `not a blob reference: ${JSON.stringify(ref)}`);
  return ref.slice('sha256:'.length);
}

/** Whether the file holds exactly `bytes` (false when there is none). */
async function holds(fs: LedgerFs, path: string, bytes: Uint8Array): Promise<boolean> {
  try {
    if ((await fs.stat(path)).size !== bytes.length) return false;
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).equals(await fs.readFile(path));
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return false;
    throw e;
  }
}

async function syncFile(fs: LedgerFs, path: string): Promise<void> {
  await syncHandle(await fs.open(path, 'r'));
}

/** fsync, then close (whatever the fsync did). */
async function syncHandle(handle: FileHandle): Promise<void> {
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function blobError(path: string, e: unknown): AciaError {
  return new AciaError('LEDGER_IO', `cannot write blob ${path}: ${(e as Error).message}`, { cause: e });
}
