// How replay decides that a replayed entry is the recorded one: entries are compared per decision
// stream (an actor, and the task it works on), after dropping what is where and when rather than what
// (durations, the fleet worker, the metrics a policy request carried).
import { canonicalJson } from '../core/acm/canonical-json.js';
import type { LedgerEntry } from '../core/ledger/entry.js';
import type { LedgerEntryType } from '../core/ledger/events.js';

/** Entries that record the session rather than a decision: resumes, crash recovery, the stop itself. */
// EVAL_GRADED is the eval harness's grade, appended after the run: no decision of the team to replay.
export const SESSION_TYPES: ReadonlySet<LedgerEntryType> = new Set(['RUN_RESUMED', 'LEDGER_RECOVERED', 'RUN_COMPLETED', 'EVAL_GRADED', 'CANCEL_REQUESTED']);

export interface EntrySummary {
  seq: number;
  actor: string;
  type: string;
  data: unknown;
}

export interface Divergence {
  actor: string;
  index: number;
  recorded: EntrySummary | null;
  replayed: EntrySummary | null;
  reason: string;
}

/** The decision stream an entry belongs to: parallel tasks interleave, but within one actor and task the order is the decision order. */
export function streamOf(actor: string, taskId: string | undefined): string {
  return taskId === undefined ? actor : `${actor} ${taskId}`;
}

/**
 * The stream of an entry, or of one about to be appended. A message is an input taken in whenever a poll
 * saw it (a replay takes it in where it is delivered): each is compared on its own, as it was received;
 * where it reached an agent is its delivery's stream.
 */
export function streamKey(e: { actor: string; type: string; data: unknown }): string {
  const d = typeof e.data === 'object' && e.data !== null ? e.data : {};
  if (e.type === 'MESSAGE_RECEIVED' && 'id' in d && typeof d.id === 'string') return streamOf(e.actor, `message ${d.id}`);
  return streamOf(e.actor, 'taskId' in d && typeof d.taskId === 'string' ? d.taskId : undefined);
}

/**
 * Each escalation's seq → its place among the run's escalations. An answer names its question by seq, and
 * seqs move when a message is taken in at another point: compared by place, the same answer is the same.
 */
export function escalationOrdinals(entries: readonly LedgerEntry[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const e of entries) if (e.type === 'ESCALATION_REQUESTED') out.set(e.seq, out.size);
  return out;
}

/** Decision entries by stream, in order (results of concurrent tool calls in call order). */
export function byStream(entries: readonly LedgerEntry[]): Map<string, LedgerEntry[]> {
  const m = new Map<string, LedgerEntry[]>();
  for (const e of entries) {
    if (SESSION_TYPES.has(e.type)) continue;
    // A run.end hook reports on a session's end, as RUN_COMPLETED does: not a decision to replay.
    if (e.type === 'POLICY_DECISION' && e.data.hook === 'run.end') continue;
    const key = streamKey(e);
    const list = m.get(key) ?? [];
    list.push(e);
    m.set(key, list);
  }
  for (const list of m.values()) sortConcurrentResults(list);
  return m;
}

/**
 * The same decision: same type, same data once placement and timing are dropped. `xo`/`yo`: each ledger's
 * escalation ordinals, so an answer is compared by the place of its question rather than its seq.
 */
export function sameDecision(x: LedgerEntry, y: LedgerEntry, xo?: ReadonlyMap<number, number>, yo?: ReadonlyMap<number, number>): boolean {
  return x.type === y.type && canonicalJson(normalise(x, xo)) === canonicalJson(normalise(y, yo));
}

export function whyDifferent(x: LedgerEntry | undefined, y: LedgerEntry | undefined): string {
  if (!x) return 'the replay made a decision the recording does not have';
  if (!y) return 'the recording has a decision the replay did not make';
  return x.type !== y.type ? `${x.type} was recorded, ${y.type} replayed` : `${x.type} differs`;
}

export function summary(e: LedgerEntry): EntrySummary {
  return { seq: e.seq, actor: e.actor, type: e.type, data: e.data };
}

/** The first divergence of the replayed streams from the recorded ones, earliest in the recording; null when they match. */
export function firstDivergence(recorded: readonly LedgerEntry[], replayed: readonly LedgerEntry[]): Divergence | null {
  const a = byStream(recorded);
  const b = byStream(replayed);
  const [ao, bo] = [escalationOrdinals(recorded), escalationOrdinals(replayed)];
  const keys = [...new Set([...a.keys(), ...b.keys()])].sort();
  let first: Divergence | null = null;
  for (const key of keys) {
    const ra = a.get(key) ?? [];
    const rb = b.get(key) ?? [];
    for (let i = 0; i < Math.max(ra.length, rb.length); i++) {
      const x = ra[i];
      const y = rb[i];
      if (x && y && sameDecision(x, y, ao, bo)) continue;
      // Report the divergence earliest in the recording.
      if (first === null || (x?.seq ?? Infinity) < (first.recorded?.seq ?? Infinity)) {
        first = { actor: key, index: i, recorded: x ? summary(x) : null, replayed: y ? summary(y) : null, reason: whyDifferent(x, y) };
      }
      break;
    }
  }
  return first;
}

/**
 * Results of calls that ran concurrently land in completion order: compare them in call order. A planner
 * read's CONTEXT_INTERNALIZED is appended right after its TOOL_RESULT and moves with it.
 */
function sortConcurrentResults(list: LedgerEntry[]): void {
  const useId = (e: LedgerEntry) => (e.type === 'TOOL_RESULT' ? e.data.toolUseId : '');
  const follows = (e: LedgerEntry | undefined, id: string) => e?.type === 'CONTEXT_INTERNALIZED' && e.data.artifacts[0]?.toolUseId === id;
  for (let i = 0; i < list.length; ) {
    const groups: LedgerEntry[][] = [];
    let j = i;
    while (j < list.length && list[j]!.type === 'TOOL_RESULT') {
      const group = [list[j]!];
      if (follows(list[j + 1], useId(list[j]!))) group.push(list[j + 1]!);
      groups.push(group);
      j += group.length;
    }
    if (groups.length > 1) {
      groups.sort((a, b) => (useId(a[0]!) < useId(b[0]!) ? -1 : useId(a[0]!) > useId(b[0]!) ? 1 : 0));
      list.splice(i, j - i, ...groups.flat());
    }
    i = Math.max(j, i + 1);
  }
}

/** Wall-clock facts (durations) and placement (the worker) are not decisions; everything else must match exactly. */
function normalise(e: LedgerEntry, ordinals?: ReadonlyMap<number, number>): unknown {
  const data: object = e.data;
  if (e.type === 'HUMAN_RESPONSE' && ordinals) {
    const place = ordinals.get(e.data.escalationSeq);
    return { type: e.type, data: { ...e.data, escalationSeq: place === undefined ? `seq ${e.data.escalationSeq}` : `question ${place}` } };
  }
  // Which fleet worker ran an attempt is where, not what: a replay runs every task in one process.
  const rest = Object.fromEntries(Object.entries(data).filter(([k]) => k !== 'durationMs' && k !== 'worker'));
  if (e.type === 'POLICY_DECISION') {
    const req = typeof e.data.request === 'object' && e.data.request !== null ? Object.fromEntries(Object.entries(e.data.request).filter(([k]) => k !== 'metrics')) : e.data.request;
    return { type: e.type, data: { ...rest, request: req } };
  }
  // How a request and a response are stored (a blob file, a delta of the request before, the response inline:
  // core/ledger/request-delta.ts, inline-blobs.ts) is not what was asked or answered: their content
  // addresses, requestHash and responseRef, are, and they must match.
  if (e.type === 'LLM_CALL') {
    delete (rest as { request?: unknown }).request;
    delete (rest as { response?: unknown }).response;
  }
  return { type: e.type, data: rest };
}
