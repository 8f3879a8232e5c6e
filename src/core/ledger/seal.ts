// Turns an append request into the next chained entry: validates actor, type and payload, assigns seq,
// a monotonic ts and prevHash, and hashes it. Every ledger implementation seals through here, on the
// in-memory chain they share (SealedChain).
import { canonicalJson, sha256Hex } from '../acm/canonical-json.js';
import { Actor, GENESIS_HASH } from '../acm/contracts.js';
import type { Clock, RunId } from '../acm/ids.js';
import { AciaError, errorMessage } from '../errors.js';
import { decodeEventData, typedEntry, type LedgerEntry } from './entry.js';
import { checkEntryShape } from './entry-shape.js';
import { EVENT_VERSION, LedgerEntryType } from './events.js';
import type { AppendInput, LedgerHead } from './types.js';

/**
 * The next entry and its line. The entry is what a reader of the line gets (its payload parsed from the
 * line's JSON), so the state folded while a run records is the state a resume folds from the file.
 */
export function sealEntry(last: LedgerEntry | undefined, runId: string, clock: Clock, input: AppendInput): { entry: LedgerEntry; line: string } {
  if (!Actor.safeParse(input.actor).success) throw new AciaError('INPUT_INVALID', `ledger entry: bad actor ${JSON.stringify(input.actor)}`);
  const type = LedgerEntryType.parse(input.type);
  const version = EVENT_VERSION[type] ?? 1;
  const now = clock.now().toISOString();
  // A clock stepping backwards must not make the ledger's time non-monotonic.
  const ts = last && last.ts > now ? last.ts : now;
  const unhashed = { seq: last ? last.seq + 1 : 0, ts, runId, actor: input.actor, type, ...(version > 1 ? { v: version } : {}), data: input.data, prevHash: last ? last.hash : GENESIS_HASH };
  // Serialise once: the hashed text is the line minus its `hash` member (same bytes entryHash hashes).
  let text: string;
  try {
    text = canonicalJson(unhashed);
  } catch (e) {
    throw new AciaError('INPUT_INVALID', `ledger entry ${type}: not JSON (${errorMessage(e)})`);
  }
  const hash = sha256Hex(text);
  const at = text.lastIndexOf(',"prevHash":"');
  const line = `${text.slice(0, at)},"hash":"${hash}"${text.slice(at)}\n`;
  // The payload is checked as it will be read back: from the line's JSON.
  const shape = checkEntryShape(JSON.parse(line));
  if (!shape.ok) throw new AciaError('INPUT_INVALID', `ledger entry ${type}: ${shape.message}`);
  const stored = shape.entry;
  const decoded = decodeEventData(type, version, stored.data);
  if (!decoded.ok) throw new AciaError('INPUT_INVALID', `ledger entry ${decoded.message}`);
  return { entry: typedEntry(stored, decoded.data), line };
}

/**
 * What the file, memory and PostgreSQL ledgers share: the run's entries in memory, in seq order, its
 * head, and sealing the next entry on that tail. Each ledger writes the sealed entry its own way and
 * pushes it onto `list` when it holds (at once for file and memory, once inserted for PostgreSQL).
 */
export abstract class SealedChain {
  constructor(
    readonly runId: RunId,
    private readonly clock: Clock,
    protected readonly list: LedgerEntry[],
  ) {}

  entries(): readonly LedgerEntry[] {
    return this.list;
  }

  head(): LedgerHead | null {
    const last = this.list.at(-1);
    return last ? { seq: last.seq, hash: last.hash } : null;
  }

  /** The entry after the tail, and its line (canonical JSON and a newline); not yet in `list`. */
  protected seal(input: AppendInput): { entry: LedgerEntry; line: string } {
    return sealEntry(this.list.at(-1), this.runId, this.clock, input);
  }
}
