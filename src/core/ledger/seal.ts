// Turns an append request into the next chained entry: validates actor, type and payload, assigns seq,
// a monotonic ts and prevHash, and hashes it. Every ledger implementation seals through here, on the
// in-memory chain they share (SealedChain).
import { canonicalJson, sha256Hex } from '../acm/canonical-json.js';
import { Actor, GENESIS_HASH, LedgerEntryType, type LedgerEntry } from '../acm/contracts.js';
import type { Clock, RunId } from '../acm/ids.js';
import { AciaError } from '../errors.js';
import { EventData } from './events.js';
import type { AppendInput, LedgerHead } from './types.js';

export function sealEntry(last: LedgerEntry | undefined, runId: string, clock: Clock, input: AppendInput): { entry: LedgerEntry; line: string } {
  if (!Actor.safeParse(input.actor).success) throw new AciaError('INPUT_INVALID', `ledger entry: bad actor ${JSON.stringify(input.actor)}`);
  const type = LedgerEntryType.parse(input.type);
  const check = EventData[type].safeParse(input.data);
  if (!check.success) {
    const issue = check.error.issues[0];
    throw new AciaError('INPUT_INVALID', `ledger entry ${type}: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? ''}`);
  }
  const now = clock.now().toISOString();
  // A clock stepping backwards must not make the ledger's time non-monotonic.
  const ts = last && last.ts > now ? last.ts : now;
  const unhashed = { seq: last ? last.seq + 1 : 0, ts, runId, actor: input.actor, type, data: input.data, prevHash: last ? last.hash : GENESIS_HASH };
  // Serialise once: the hashed text is the line minus its `hash` member (same bytes entryHash hashes).
  const text = canonicalJson(unhashed);
  const hash = sha256Hex(text);
  const at = text.lastIndexOf(',"prevHash":"');
  const line = `${text.slice(0, at)},"hash":"${hash}"${text.slice(at)}\n`;
  return { entry: JSON.parse(line) as LedgerEntry, line };
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
