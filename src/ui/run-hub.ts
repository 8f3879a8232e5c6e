// Keeps every run of a store folded and tailed: the runs list is each run's row, a run's page gets its
// entries once and then only the new ones. A run is read from the start once, when the hub first sees
// it; after that only what its ledger gained (the store's cursor) is read, whatever the run's length.
import type { LedgerEntry } from '../core/ledger/entry.js';
import { errorMessage } from '../core/errors.js';
import { RunFold, type RunRow } from './run-model.js';
import { START, type Cursor, type RunStore, type VerifyStatus } from './store.js';

export type VerifyState = { state: 'pending' } | ({ state: 'done'; atEntries: number } & VerifyStatus) | { state: 'error'; message: string };

export interface RunListRow extends RunRow {
  verify: VerifyState;
  /** Why the run cannot be read (a broken ledger line, a refused link); the row then shows little else. */
  error: string | null;
}

interface Watched {
  fold: RunFold;
  cursor: Cursor;
  /** Entries kept while a page watches the run; dropped when the last one leaves. */
  entries: LedgerEntry[] | null;
  subscribers: Set<(entries: LedgerEntry[]) => void>;
  waiters: Set<{ test: (e: LedgerEntry) => boolean; done: () => void }>;
  verify: VerifyState;
  verifyTimer: NodeJS.Timeout | null;
  error: string | null;
  /** Reads of this run, one after another. */
  queue: Promise<void>;
}

/** How long a run must stay quiet before it is verified again (verify reads every entry and blob). */
const VERIFY_QUIET_MS = 800;

export class RunHub {
  private readonly runs = new Map<string, Watched>();
  private readonly listeners = new Set<(row: RunListRow) => void>();
  private stopWatch: (() => void) | null = null;
  private listing: Promise<void> = Promise.resolve();

  constructor(private readonly store: RunStore) {}

  async start(): Promise<void> {
    await this.relist();
    this.stopWatch = this.store.watch((runId) => {
      if (runId === null) void this.relist();
      else void this.refresh(runId, true);
    });
  }

  async stop(): Promise<void> {
    this.stopWatch?.();
    for (const w of this.runs.values()) if (w.verifyTimer) clearTimeout(w.verifyTimer);
    await this.store.close();
  }

  rows(): RunListRow[] {
    return [...this.runs.entries()].map(([id, w]) => this.rowOf(id, w));
  }

  has(runId: string): boolean {
    return this.runs.has(runId);
  }

  /** Calls `send` with every row that changes until unsubscribed. */
  onRow(send: (row: RunListRow) => void): () => void {
    this.listeners.add(send);
    return () => this.listeners.delete(send);
  }

  /**
   * The run's entries from `fromSeq` on, then each batch appended, to `send`. Resolves with the
   * unsubscribe function once the backlog is sent.
   */
  async subscribe(runId: string, fromSeq: number, send: (entries: LedgerEntry[]) => void): Promise<() => void> {
    const w = this.runs.get(runId);
    if (!w) throw new Error(`no run ${runId}`);
    await this.serial(w, async () => {
      if (w.entries === null) w.entries = (await this.store.read(runId, START, w.cursor.seq)).entries;
      const backlog = w.entries.slice(Math.max(0, fromSeq));
      for (let i = 0; i < backlog.length; i += 500) send(backlog.slice(i, i + 500));
      w.subscribers.add(send);
    });
    return () => {
      w.subscribers.delete(send);
      if (w.subscribers.size === 0) w.entries = null;
    };
  }

  /** The run's fold as it stands (the action endpoint checks what a run is waiting for). */
  fold(runId: string): RunFold | null {
    return this.runs.get(runId)?.fold ?? null;
  }

  /** Settles when an entry passing `test` is appended to the run from now on (register before causing it). */
  waitFor(runId: string, test: (e: LedgerEntry) => boolean): Promise<void> {
    const w = this.runs.get(runId);
    if (!w) return Promise.reject(new Error(`no run ${runId}`));
    return new Promise((resolve) => {
      const waiter = { test, done: () => (w.waiters.delete(waiter), resolve()) };
      w.waiters.add(waiter);
    });
  }

  verifyState(runId: string): VerifyState | null {
    return this.runs.get(runId)?.verify ?? null;
  }

  private relist(): Promise<void> {
    this.listing = this.listing.then(async () => {
      let ids: string[];
      try {
        ids = await this.store.listRunIds();
      } catch {
        return;
      }
      for (const id of ids) {
        if (this.runs.has(id)) continue;
        const w: Watched = { fold: new RunFold(), cursor: START, entries: null, subscribers: new Set(), waiters: new Set(), verify: { state: 'pending' }, verifyTimer: null, error: null, queue: Promise.resolve() };
        this.runs.set(id, w);
        await this.refresh(id);
        // Shown at once, even before its first entry.
        if (w.fold.count === 0) this.emit(id, w);
      }
    });
    return this.listing;
  }

  /**
   * Reads what the run's ledger gained since the cursor and hands it to everyone watching. `touched`:
   * something else of the run changed (its manifest, after the last entry), so it is verified again.
   */
  refresh(runId: string, touched = false): Promise<void> {
    const w = this.runs.get(runId);
    if (!w) return this.relist();
    return this.serial(w, async () => {
      let gained = false;
      try {
        for (;;) {
          const { entries, cursor } = await this.store.read(runId, w.cursor);
          if (entries.length === 0) break;
          gained = true;
          w.cursor = cursor;
          w.fold.apply(entries);
          w.entries?.push(...entries);
          for (const send of w.subscribers) send(entries);
          for (const waiter of [...w.waiters]) if (entries.some(waiter.test)) waiter.done();
        }
        w.error = null;
      } catch (e) {
        w.error = errorMessage(e);
        gained = true;
      }
      if (gained) this.emit(runId, w);
      if (gained || touched) this.scheduleVerify(runId, w);
    });
  }

  private scheduleVerify(runId: string, w: Watched): void {
    if (w.verifyTimer) clearTimeout(w.verifyTimer);
    w.verifyTimer = setTimeout(() => {
      w.verifyTimer = null;
      void this.serial(w, async () => {
        try {
          const v = await this.store.verify(runId);
          w.verify = { state: 'done', atEntries: w.fold.count, ...v };
        } catch (e) {
          w.verify = { state: 'error', message: errorMessage(e) };
        }
        this.emit(runId, w);
      });
    }, VERIFY_QUIET_MS);
    w.verifyTimer.unref();
  }

  private emit(runId: string, w: Watched): void {
    const row = this.rowOf(runId, w);
    for (const send of this.listeners) send(row);
  }

  private rowOf(runId: string, w: Watched): RunListRow {
    return { ...w.fold.row(runId), verify: w.verify, error: w.error };
  }

  private serial(w: Watched, job: () => Promise<void>): Promise<void> {
    const next = w.queue.then(job);
    w.queue = next.catch(() => undefined);
    return next;
  }
}
