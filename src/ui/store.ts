// Where `acia ui` reads runs from: one repository's `.acia/runs` (local-store.ts) or a fleet's
// PostgreSQL ledger (fleet-store.ts). The server and the hub see only this interface, so both sources
// are shown, watched, verified and answered the same way.
import type { LedgerEntry } from '../core/ledger/entry.js';

/** How far a reader got in a run's ledger: the next seq, and (for a file) the byte offset of its line. */
export interface Cursor {
  seq: number;
  offset: number;
}

export const START: Cursor = { seq: 0, offset: 0 };

export interface VerifyStatus {
  ok: boolean;
  entries: number;
  problems: { seq: number | null; code: string; message: string }[];
}

/** What became of an answer given from the page. */
export type AnswerOutcome = { ok: true } | { ok: false; message: string };

export interface RunStore {
  /** What the page says it shows: the repository, or the fleet's database (without credentials). */
  readonly label: string;
  readonly kind: 'repo' | 'fleet';
  listRunIds(): Promise<string[]>;
  /** Complete entries from `from` on (before seq `until` when given), and the cursor after them. */
  read(runId: string, from: Cursor, until?: number): Promise<{ entries: LedgerEntry[]; cursor: Cursor }>;
  /** Calls `changed(runId)` when a run may have new entries, `changed(null)` when runs may have come or gone. */
  watch(changed: (runId: string | null) => void): () => void;
  /** A blob the run stored, at most `maxBytes` of it; null when the run has no such blob. */
  blob(runId: string, ref: string, maxBytes: number): Promise<{ bytes: Buffer; truncated: boolean } | null>;
  /** The same check as `acia verify <runId>` (with `--db` for a fleet). */
  verify(runId: string): Promise<VerifyStatus>;
  /** The unified diff between two commits of the run (no base: the commit's parent), or null where they are not at hand. */
  diff(runId: string, base: string, commit: string): Promise<string | null>;
  /**
   * Records the answer to the run's open escalation as `acia resume <runId> --answer <text>` does, and
   * goes on; `recorded` settles when the run's ledger holds it.
   */
  answer(runId: string, text: string, recorded: Promise<void>): Promise<AnswerOutcome>;
  close(): Promise<void>;
}

/** Commits named by a ledger reach git only as hex object names, so no entry can pass git an option. */
export function isCommitName(s: string): boolean {
  return /^[0-9a-f]{7,64}$/.test(s);
}
