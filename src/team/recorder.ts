// The team's single path to the ledger: appends an entry, folds it into the live run state in seq
// order, and tells progress listeners.
import type { LedgerEntry } from '../core/ledger/entry.js';
import type { LedgerEntryType } from '../core/ledger/events.js';
import type { Clock } from '../core/acm/ids.js';
import type { EventDataOf } from '../core/ledger/events.js';
import type { RunLedger } from '../core/ledger/types.js';
import { applyEntry, type RunState } from './run-state.js';

export class Recorder {
  private applied: number;

  constructor(
    readonly ledger: RunLedger,
    readonly state: RunState,
    private readonly clock: Clock,
    private readonly listener: ((entry: LedgerEntry) => void) | undefined,
  ) {
    this.applied = state.lastSeq;
  }

  async record<T extends LedgerEntryType>(actor: string, type: T, data: EventDataOf<T>): Promise<LedgerEntry> {
    const entry = await this.ledger.append({ actor, type, data });
    this.catchUp();
    return entry;
  }

  /**
   * Records without waiting for the entry to be durable (where the ledger can queue it): for entries a
   * crash may lose at the cost of a redo, never of a wrong state (a model call's record, a tool's result).
   * The entry is in order and folded at once; it is durable with the next group commit, a millisecond or
   * two later, and the next `record` waits for it. Before anything that changes the world outside the
   * ledger, ACIA records with `record` (a tool that can change something, a checkpoint, a merge).
   */
  async note<T extends LedgerEntryType>(actor: string, type: T, data: EventDataOf<T>): Promise<void> {
    if (this.ledger.appendQueued === undefined) {
      await this.record(actor, type, data);
      return;
    }
    this.ledger.appendQueued({ actor, type, data });
    this.catchUp();
  }

  /**
   * Folds what other writers appended since (a fleet run's task workers write to the same ledger):
   * the orchestrator calls it after a task ran elsewhere, before it acts on the task's outcome.
   */
  async sync(): Promise<void> {
    await this.ledger.refresh?.();
    this.catchUp();
  }

  /** Applies every entry not yet folded, in seq order, whichever append resolved first. */
  private catchUp(): void {
    const all = this.ledger.entries();
    for (let i = this.applied + 1; i < all.length; i++) {
      const e = all[i]!;
      applyEntry(this.state, e);
      this.applied = e.seq;
      this.listener?.(e);
    }
  }

  blob(content: string | Uint8Array): Promise<string> {
    return this.ledger.putBlob(content);
  }

  now(): number {
    return this.clock.now().getTime();
  }
}
