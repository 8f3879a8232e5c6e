// The ledger contract: an append-only, hash-chained record of a run, with a blob store beside it.
import type { RunId } from '../acm/ids.js';
import type { LedgerEntry } from './entry.js';
import type { LedgerEntryType } from './events.js';

export interface AppendInput {
  actor: string;
  type: LedgerEntryType;
  data: unknown;
}

export interface LedgerHead {
  seq: number;
  hash: string;
}

export interface RunLedger {
  readonly runId: RunId;
  readonly dir: string;
  /** Entries in order, including those read on open, each parsed (entry.ts). */
  entries(): readonly LedgerEntry[];
  head(): LedgerHead | null;
  /** Resolves once the entry is durable (fsync'd, possibly with others in one group commit). */
  append(input: AppendInput): Promise<LedgerEntry>;
  /**
   * Seals the entry (seq, chain) now and returns it without waiting for it to be durable: it goes out with
   * the ledger's next group commit, and the next `append` that is awaited is a barrier for it. A write
   * that fails makes later appends fail. Absent where every append is its own transaction (PostgreSQL).
   */
  appendQueued?(input: AppendInput): LedgerEntry;
  /** Stores content write-once under its sha256; returns `sha256:<hex>`. */
  putBlob(content: string | Uint8Array): Promise<string>;
  getBlob(ref: string): Promise<Buffer>;
  /**
   * The blobs (sha256 hex) this ledger wrote or found whole since it was opened: their bytes hashed to
   * their names when they were put. The run's bundle links them without reading and hashing them again.
   * Absent where blobs live elsewhere (PostgreSQL).
   */
  blobsWritten?(): ReadonlySet<string>;
  /** Reads entries other writers appended (a fleet run's task workers); absent for single-writer ledgers. */
  refresh?(): Promise<void>;
  close(): Promise<void>;
}
