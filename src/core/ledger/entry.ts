// A ledger entry as every reader sees it: a discriminated union on `type` whose `data` was parsed with
// that type's schema (events.ts), upgraded from the version it was written in. This module is the only
// way from stored JSON to a LedgerEntry and the only place that asserts a payload's type: readers switch
// on `type` and get the payload typed (scripts/check-architecture.mjs refuses casts of ledger data
// anywhere else). The hash covers the stored JSON, never this parsed form: chain checks read
// StoredLedgerEntry (entry-shape.ts).
//
// Adding an entry type is one change: its name and payload schema in EventData (events.ts); the
// union, the parser, verify and the JSON Schemas follow from that table. What the new type means is
// then up to its readers, each optional: a reducer in core/run/reducer.ts when it changes run state,
// a line in app/describe.ts when the generic description is not enough. Changing an existing payload
// incompatibly is a new version of it: see EVENT_VERSION in events.ts.
import type { z } from 'zod';
import type { RunId, Seq } from '../acm/ids.js';
import { AciaError } from '../errors.js';
import { checkEntryShape, type StoredLedgerEntry } from './entry-shape.js';
import { EVENT_VERSION, EventData, OLDER_EVENT_DATA, type EventDataOf, type LedgerEntryType, type OlderEventData } from './events.js';

interface Envelope {
  seq: Seq;
  ts: string;
  runId: RunId;
  actor: string;
  prevHash: string;
  hash: string;
}

type EntryMap = { [K in LedgerEntryType]: Envelope & { type: K; data: EventDataOf<K> } };

/** The entry of one type, its payload in the current version's shape. */
export type EntryOf<K extends LedgerEntryType> = EntryMap[K];

/** Any ledger entry; `switch (entry.type)` narrows `entry.data`. */
export type LedgerEntry = EntryMap[LedgerEntryType];

/** The schemas a payload is read with: the real table by default, another in tests of versioning. */
export interface EventSchemas {
  current: Readonly<Record<string, z.ZodType>>;
  version: Readonly<Partial<Record<string, number>>>;
  older: Readonly<Partial<Record<string, Readonly<Record<number, OlderEventData>>>>>;
}

const SCHEMAS: EventSchemas = { current: EventData, version: EVENT_VERSION, older: OLDER_EVENT_DATA };

export type DecodeResult = { ok: true; data: unknown } | { ok: false; message: string; newer: boolean };

/** A payload written in `version` of `type`, as the current version: upgraded step by step, then parsed. */
export function decodeEventData(type: string, version: number, data: unknown, schemas: EventSchemas = SCHEMAS): DecodeResult {
  const schema = schemas.current[type];
  if (schema === undefined) return { ok: false, message: `${type} is not an entry type this acia knows`, newer: true };
  const current = schemas.version[type] ?? 1;
  if (version > current) return { ok: false, message: `${type} data version ${version} is newer than this acia reads (${current})`, newer: true };
  let value = data;
  for (let v = version; v < current; v++) {
    const older = schemas.older[type]?.[v];
    if (older === undefined) return { ok: false, message: `${type} data version ${v} has no schema in this acia`, newer: false };
    const step = older.schema.safeParse(value);
    if (!step.success) return { ok: false, message: `${type} data (version ${v}): ${issueOf(step.error)}`, newer: false };
    value = older.upgrade(step.data);
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? { ok: true, data: parsed.data } : { ok: false, message: `${type} data: ${issueOf(parsed.error)}`, newer: false };
}

/** A stored entry as a typed one; LEDGER_CORRUPT (naming `where`) when its payload does not read. */
export function parseLedgerEntry(stored: StoredLedgerEntry, where: string): LedgerEntry {
  const decoded = decodeEventData(stored.type, stored.v ?? 1, stored.data);
  if (!decoded.ok) {
    throw new AciaError('LEDGER_CORRUPT', `${where}: seq ${stored.seq}: ${decoded.message}`, decoded.newer ? { hint: 'the run was written by a newer acia: upgrade acia to read it' } : undefined);
  }
  return typedEntry(stored, decoded.data);
}

/** Any JSON value as a typed entry: the envelope checked (fast path first), then the payload. */
export function parseLedgerValue(value: unknown, where: string): LedgerEntry {
  const shape = checkEntryShape(value);
  if (!shape.ok) throw new AciaError('LEDGER_CORRUPT', `${where}: not a ledger entry (${shape.message})`);
  return parseLedgerEntry(shape.entry, where);
}

/**
 * The typed entry for a stored one whose payload `data` was decoded for its type. The one assertion of
 * a payload's type in ACIA: decodeEventData parsed it with the schema `stored.type` names.
 */
export function typedEntry(stored: StoredLedgerEntry, data: unknown): LedgerEntry {
  const { seq, ts, runId, actor, type, prevHash, hash } = stored;
  return { seq, ts, runId, actor, type, data, prevHash, hash } as LedgerEntry;
}

/** Narrows an entry to one type (a type guard for `filter`, `find` and loops). */
export function isEntryOf<K extends LedgerEntryType>(entry: LedgerEntry, type: K): entry is EntryOf<K> {
  return entry.type === type;
}

/** The payloads of every entry of one type, in ledger order. */
export function dataOf<K extends LedgerEntryType>(entries: Iterable<LedgerEntry>, type: K): EventDataOf<K>[] {
  const out: EventDataOf<K>[] = [];
  for (const e of entries) if (isEntryOf(e, type)) out.push(e.data);
  return out;
}

/** The first entry of one type, or undefined. */
export function firstOf<K extends LedgerEntryType>(entries: Iterable<LedgerEntry>, type: K): EntryOf<K> | undefined {
  for (const e of entries) if (isEntryOf(e, type)) return e;
  return undefined;
}

/** The last entry of one type, or undefined. */
export function lastOf<K extends LedgerEntryType>(entries: readonly LedgerEntry[], type: K): EntryOf<K> | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (isEntryOf(e, type)) return e;
  }
  return undefined;
}

/** The task an entry is about, for the types whose payload names one. */
export function taskIdOf(entry: LedgerEntry): string | undefined {
  const d: object = entry.data;
  return 'taskId' in d && typeof d.taskId === 'string' ? d.taskId : undefined;
}

function issueOf(error: z.ZodError): string {
  const issue = error.issues[0];
  return `${issue?.path.join('.') ?? ''}: ${issue?.message ?? ''}`;
}
