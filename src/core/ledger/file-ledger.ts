// The file-backed RunLedger: JSONL of canonical entries, durable appends with group commit, crash
// recovery of a torn tail on open, and a per-run writer lock.
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { GENESIS_HASH } from '../acm/contracts.js';
import { asRunId, type Clock, type RunId } from '../acm/ids.js';
import { AciaError, errorMessage } from '../errors.js';
import { BlobStore } from './blob-store.js';
import { parseLedgerEntry, type LedgerEntry } from './entry.js';
import { checkEntryShape, type StoredLedgerEntry } from './entry-shape.js';
import { lineHashMatches } from './hash.js';
import { errnoCode, nodeLedgerFs, syncDir, type LedgerFs } from './ledger-fs.js';
import { parseLineJson, readLedgerLines } from './line-reader.js';
import { acquireRunLock, type RunLock } from './run-lock.js';
import { SealedChain } from './seal.js';
import type { AppendInput, RunLedger } from './types.js';

export interface OpenRunLedgerOptions {
  clock: Clock;
  /** Create the run directory and an empty ledger if missing; otherwise a missing run is RUN_NOT_FOUND. */
  create: boolean;
  fs?: LedgerFs;
}

export const LEDGER_FILE = 'ledger.jsonl';

/**
 * Opens (or creates) a run's ledger for appending. Write-ahead is the caller's rule: `await
 * ledger.append(...)` before performing the side effect it describes, and the entry is on disk first.
 */
export async function openRunLedger(runDir: string, runId: string, options: OpenRunLedgerOptions): Promise<RunLedger> {
  const fs = options.fs ?? nodeLedgerFs;
  const id = asRunId(runId);
  const path = join(runDir, LEDGER_FILE);
  const existed = await fileExists(fs, path);
  if (!existed && !options.create) throw new AciaError('RUN_NOT_FOUND', `run ${runId} not found (no ${path})`);
  try {
    await fs.mkdir(join(runDir, 'blobs'), { recursive: true });
  } catch (e) {
    throw new AciaError('LEDGER_IO', `cannot create ${runDir}: ${errorMessage(e)}`, {
      cause: e,
      hint: 'runs are kept under .acia/runs in the repository: it must be a writable directory with free space',
    });
  }
  const lock = await acquireRunLock(fs, runDir, runId, options.clock.now().toISOString());
  try {
    const loaded = existed ? await loadExisting(path, id) : { entries: [], goodBytes: 0, torn: null };
    if (loaded.torn) await truncateTo(fs, path, loaded.goodBytes);
    const handle = await openForAppend(fs, path);
    if (!existed) await syncDir(fs, runDir);
    const ledger = new FileRunLedger(id, runDir, path, handle, lock, options.clock, new BlobStore(join(runDir, 'blobs'), fs, { deferSync: true }), loaded.entries);
    if (loaded.torn) await ledger.append({ actor: 'team', type: 'LEDGER_RECOVERED', data: loaded.torn });
    return ledger;
  } catch (e) {
    await lock.release();
    throw e;
  }
}

interface Pending {
  bytes: Buffer;
  entry: LedgerEntry;
  resolve: (entry: LedgerEntry) => void;
  reject: (e: unknown) => void;
}

class FileRunLedger extends SealedChain implements RunLedger {
  private queue: Pending[] = [];
  private flushing: Promise<void> | null = null;
  private failure: AciaError | null = null;
  private closed = false;

  constructor(
    runId: RunId,
    readonly dir: string,
    private readonly path: string,
    private readonly handle: FileHandle,
    private readonly lock: RunLock,
    clock: Clock,
    private readonly blobs: BlobStore,
    list: LedgerEntry[],
  ) {
    super(runId, clock, list);
  }

  /** Seq, ts and the chain are fixed synchronously here, so entry order is call order. */
  append(input: AppendInput): Promise<LedgerEntry> {
    if (this.closed) return Promise.reject(new AciaError('LEDGER_IO', `ledger ${this.path} is closed`));
    if (this.failure) return Promise.reject(this.failure);
    let entry: LedgerEntry;
    let line: string;
    try {
      ({ entry, line } = this.seal(input));
    } catch (e) {
      return Promise.reject(e instanceof AciaError ? e : new AciaError('INPUT_INVALID', `ledger entry ${input.type}: ${errorMessage(e)}`));
    }
    this.list.push(entry);
    return new Promise<LedgerEntry>((resolve, reject) => {
      this.queue.push({ bytes: Buffer.from(line, 'utf8'), entry, resolve, reject });
      // Cleared synchronously by the loop when the queue is empty, so no append is ever stranded.
      this.flushing ??= this.flushLoop();
    });
  }

  appendQueued(input: AppendInput): LedgerEntry {
    if (this.closed) throw new AciaError('LEDGER_IO', `ledger ${this.path} is closed`);
    if (this.failure) throw this.failure;
    // The promise's failure is this.failure, which the next append reports.
    this.append(input).catch(() => undefined);
    return this.list.at(-1)!;
  }

  /** Group commit: everything queued while a write+fsync is in flight goes out in the next one. */
  private async flushLoop(): Promise<void> {
    // One async body (no nested await of a helper): `flushing` must be cleared in the same microtask
    // that sees the queue empty, or an append arriving in between would be stranded.
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        try {
          // Write-ahead: the blobs these entries name are durable before the entries can be.
          await this.blobs.syncPending();
          await writeAll(this.handle, batch.length === 1 ? batch[0]!.bytes : Buffer.concat(batch.map((p) => p.bytes)));
          await this.handle.datasync();
        } catch (e) {
          // The chain in memory is now ahead of the disk: refuse further appends; reopening recovers.
          this.failure = new AciaError('LEDGER_IO', `cannot append to ${this.path}: ${errorMessage(e)}`, { cause: e });
          for (const p of [...batch, ...this.queue]) p.reject(this.failure);
          this.queue = [];
          return;
        }
        for (const p of batch) p.resolve(p.entry);
      }
    } finally {
      this.flushing = null;
    }
  }

  putBlob(content: string | Uint8Array): Promise<string> {
    return this.blobs.put(content);
  }

  getBlob(ref: string): Promise<Buffer> {
    return this.blobs.get(ref);
  }

  blobsWritten(): ReadonlySet<string> {
    return this.blobs.written();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.flushing) await this.flushing;
    // Blobs no entry named yet (written last) are made durable too before the ledger is let go.
    await this.blobs.syncPending().catch(() => undefined);
    await this.handle.close();
    await this.lock.release();
  }
}

async function writeAll(handle: FileHandle, bytes: Buffer): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done);
    done += bytesWritten;
  }
}

interface Loaded {
  entries: LedgerEntry[];
  goodBytes: number;
  torn: { truncatedBytes: number; reason: string } | null;
}

/**
 * Reads the ledger, checking the chain. Only the last line may be damaged (a write cut by a crash):
 * it is reported for truncation. Damage anywhere before it is LEDGER_CORRUPT, never skipped.
 */
async function loadExisting(path: string, runId: RunId): Promise<Loaded> {
  const entries: LedgerEntry[] = [];
  let goodBytes = 0;
  let bad: { lineNo: number; offset: number; message: string } | null = null;
  let size = 0;
  for await (const line of readLedgerLines(path)) {
    if (bad) throw new AciaError('LEDGER_CORRUPT', `${path}:${bad.lineNo}: ${bad.message}`, { hint: 'run `acia verify` for details' });
    size = line.offset + Buffer.byteLength(line.text) + (line.terminated ? 1 : 0);
    if (!line.terminated) {
      bad = { lineNo: line.lineNo, offset: line.offset, message: 'torn last line (no trailing newline)' };
      continue;
    }
    const where = `${path}:${line.lineNo}`;
    let stored: StoredLedgerEntry;
    try {
      const shape = checkEntryShape(parseLineJson(line.text, where));
      if (!shape.ok) throw new AciaError('LEDGER_CORRUPT', `not a ledger entry (${shape.message})`);
      stored = shape.entry;
    } catch (e) {
      bad = { lineNo: line.lineNo, offset: line.offset, message: `unparsable last line: ${errorMessage(e)}` };
      continue;
    }
    const prev = entries.at(-1);
    const problem =
      stored.seq !== entries.length ? `seq ${stored.seq}, expected ${entries.length}`
      : stored.prevHash !== (prev ? prev.hash : GENESIS_HASH) ? `seq ${stored.seq}: prevHash does not match the previous entry`
      : !lineHashMatches(line.text, stored) ? `seq ${stored.seq}: hash does not match its content`
      : stored.runId !== runId ? `seq ${stored.seq}: runId ${stored.runId}, expected ${runId}`
      : null;
    if (problem) throw new AciaError('LEDGER_CORRUPT', `${where}: ${problem}`, { hint: 'run `acia verify` for details' });
    // The chain holds, so this is what was written: a payload that does not read is corruption, not a torn tail.
    entries.push(parseLedgerEntry(stored, where));
    goodBytes = line.offset + Buffer.byteLength(line.text) + 1;
  }
  const torn = bad ? { truncatedBytes: size - goodBytes, reason: `line ${bad.lineNo}: ${bad.message}` } : null;
  return { entries, goodBytes, torn };
}

async function truncateTo(fs: LedgerFs, path: string, length: number): Promise<void> {
  try {
    const handle = await fs.open(path, 'r+');
    try {
      await handle.truncate(length);
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (e) {
    throw new AciaError('LEDGER_IO', `cannot truncate torn tail of ${path}: ${errorMessage(e)}`, { cause: e });
  }
}

async function openForAppend(fs: LedgerFs, path: string): Promise<FileHandle> {
  try {
    return await fs.open(path, 'a');
  } catch (e) {
    throw new AciaError('LEDGER_IO', `cannot open ${path} for appending: ${errorMessage(e)}`, { cause: e });
  }
}

async function fileExists(fs: LedgerFs, path: string): Promise<boolean> {
  try {
    await fs.stat(path);
    return true;
  } catch (e) {
    // ENOTDIR: a parent is a file (say `.acia/runs`); report it where the directory is created.
    if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR') return false;
    throw new AciaError('LEDGER_IO', `cannot read ${path}: ${errorMessage(e)}`, { cause: e });
  }
}
