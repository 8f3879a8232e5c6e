// Streaming access to a ledger file: raw lines with byte offsets (for open-time recovery and verify),
// typed entries (for every reader), and `fold` to rebuild state from entries.
import { closeSync, createReadStream, readFileSync } from 'node:fs';
import { AciaError, errorMessage } from '../errors.js';
import { openRegularForRead } from '../contain/no-follow.js';
import { parseLedgerValue, type LedgerEntry } from './entry.js';

export interface LedgerLine {
  /** 1-based line number in the file. */
  lineNo: number;
  /** Byte offset where the line starts. */
  offset: number;
  text: string;
  /** False for a final segment with no trailing newline: a torn write. */
  terminated: boolean;
}

const NEWLINE = 0x0a;

/** Reads a file in chunks and yields its lines; memory stays bounded by the longest line. */
export async function* readLedgerLines(path: string): AsyncGenerator<LedgerLine> {
  let carry: Buffer[] = [];
  let carryLen = 0;
  let offset = 0;
  let lineNo = 0;
  // A ledger a clone planted as a link (to ~/.ssh/id_rsa) or a FIFO is refused, not read.
  const fd = openRegularForRead(path);
  if (fd === null) throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: 'ENOENT', path });
  for await (const raw of createReadStream(path, { fd, highWaterMark: 1 << 20 })) {
    const chunk = raw as Buffer;
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE, start); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, nl);
      const text = carryLen === 0 ? piece.toString('utf8') : Buffer.concat([...carry, piece]).toString('utf8');
      const len = carryLen + piece.length;
      carry = [];
      carryLen = 0;
      lineNo += 1;
      yield { lineNo, offset, text, terminated: true };
      offset += len + 1;
      start = nl + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      carry.push(rest);
      carryLen += rest.length;
    }
  }
  if (carryLen > 0) {
    lineNo += 1;
    yield { lineNo, offset, text: Buffer.concat(carry).toString('utf8'), terminated: false };
  }
}

/**
 * Parses every line as a LedgerEntry, in order. A malformed line is LEDGER_CORRUPT naming it: readers
 * never skip what they cannot read. (Chain checks are verify's job; see verifyRun.)
 */
export async function* readLedgerEntries(path: string): AsyncGenerator<LedgerEntry> {
  for await (const line of readLedgerLines(path)) {
    if (!line.terminated) throw new AciaError('LEDGER_CORRUPT', `${path}:${line.lineNo}: torn last line (no newline)`);
    yield parseLedgerLine(line.text, `${path}:${line.lineNo}`);
  }
}

/**
 * Every entry of the ledger file, as readLedgerEntries gives them; `known` (a live ledger's own list, say
 * the run that just ended) is returned instead when the file holds exactly those entries (see
 * holdsEntries; `fileBytes`, when the caller read the file already, are checked instead of reading it
 * again). The bundle and the wiki each parsed the whole ledger again at a run's end: O(entries)
 * of work its writer had done entry by entry.
 */
export async function ledgerEntriesOf(path: string, known?: readonly LedgerEntry[], fileBytes?: Buffer): Promise<readonly LedgerEntry[]> {
  if (known !== undefined && holdsEntries(fileBytes ?? readLedgerBytes(path), known)) return known;
  const entries: LedgerEntry[] = [];
  for await (const e of readLedgerEntries(path)) entries.push(e);
  return entries;
}

/** The ledger file's bytes, never through a link. */
function readLedgerBytes(path: string): Buffer {
  const fd = openRegularForRead(path);
  if (fd === null) throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: 'ENOENT', path });
  try {
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Whether a ledger file's bytes are the lines of `entries`: as many lines, each terminated, and the last
 * one the last entry's seq and hash. The hash of an entry covers its content and the previous entry's
 * hash, so an intact file with the same head holds the same entries; a file altered since fails verify.
 */
export function holdsEntries(bytes: Buffer, entries: readonly LedgerEntry[]): boolean {
  const last = entries.at(-1);
  if (last === undefined) return bytes.length === 0;
  if (bytes.at(-1) !== NEWLINE) return false;
  let lines = 0;
  for (let i = bytes.indexOf(NEWLINE); i !== -1; i = bytes.indexOf(NEWLINE, i + 1)) lines += 1;
  if (lines !== entries.length) return false;
  let head: unknown;
  try {
    head = JSON.parse(bytes.toString('utf8', bytes.lastIndexOf(NEWLINE, bytes.length - 2) + 1, bytes.length - 1));
  } catch {
    return false;
  }
  return typeof head === 'object' && head !== null && 'seq' in head && head.seq === last.seq && 'hash' in head && head.hash === last.hash;
}

/** One line as a typed entry: JSON, the envelope, then the payload; LEDGER_CORRUPT naming `where` if any fails. */
export function parseLedgerLine(text: string, where: string): LedgerEntry {
  return parseLedgerValue(parseLineJson(text, where), where);
}

/** A line's JSON value (not yet checked as an entry). */
export function parseLineJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new AciaError('LEDGER_CORRUPT', `${where}: not JSON (${errorMessage(e)})`);
  }
}

/** Rebuilds state from entries: the executor, the wiki and resume are all folds over the ledger. */
export function fold<S>(entries: Iterable<LedgerEntry>, reducer: (state: S, entry: LedgerEntry) => S, init: S): S {
  let state = init;
  for (const entry of entries) state = reducer(state, entry);
  return state;
}

/** The async variant of fold, for a streamed ledger. */
export async function foldAsync<S>(
  entries: AsyncIterable<LedgerEntry>,
  reducer: (state: S, entry: LedgerEntry) => S,
  init: S,
): Promise<S> {
  let state = init;
  for await (const entry of entries) state = reducer(state, entry);
  return state;
}
