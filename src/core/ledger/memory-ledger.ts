// A RunLedger held in memory: same hash chain and blob addressing as the file ledger, no disk.
// Replay writes into one, and tests use it where durability is not the point.
import { sha256Hex } from '../acm/canonical-json.js';
import type { LedgerEntry } from './entry.js';
import { asRunId, type Clock } from '../acm/ids.js';
import { AciaError } from '../errors.js';
import { SealedChain } from './seal.js';
import type { AppendInput, RunLedger } from './types.js';

export class MemoryLedger extends SealedChain implements RunLedger {
  private readonly blobs = new Map<string, Buffer>();

  constructor(
    runId: string,
    clock: Clock,
    readonly dir = `memory:${runId}`,
    /** Blobs readable but not written by this ledger (replay reads the recording's). */
    private readonly fallbackBlob?: (ref: string) => Promise<Buffer>,
  ) {
    super(asRunId(runId), clock, []);
  }

  append(input: AppendInput): Promise<LedgerEntry> {
    try {
      const { entry } = this.seal(input);
      this.list.push(entry);
      return Promise.resolve(entry);
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
  }

  putBlob(content: string | Uint8Array): Promise<string> {
    const buf = Buffer.from(content);
    const ref = `sha256:${sha256Hex(buf)}`;
    this.blobs.set(ref, buf);
    return Promise.resolve(ref);
  }

  async getBlob(ref: string): Promise<Buffer> {
    const b = this.blobs.get(ref);
    if (b) return b;
    if (this.fallbackBlob) return this.fallbackBlob(ref);
    throw new AciaError('BLOB_MISSING', `no blob ${ref}`);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
