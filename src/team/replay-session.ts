// One recorded session replayed up to where it stopped. A run resumed after a crash (kill -9, a fleet
// worker or orchestrator that went away) recorded sessions that end wherever the process died. Replay
// runs each session again and cuts it off at the same place: every decision stream (an actor and its
// task) may append exactly the entries its session recorded, each checked as it comes, and whatever it
// would do next never happens, as for the process that died. The next session then resumes from what
// the replay recorded, through the code `acia resume` runs (continueRun).
import { AciaError } from '../core/errors.js';
import { lastOf, type EntryOf, type LedgerEntry } from '../core/ledger/entry.js';
import type { AppendInput, RunLedger } from '../core/ledger/types.js';
import { byStream, escalationOrdinals, SESSION_TYPES, sameDecision, streamKey, summary, whyDifferent, type Divergence } from './replay-compare.js';

/** A promise that never settles: the work of a process that died. */
export function never<T>(): Promise<T> {
  return new Promise<T>(() => undefined);
}

/** What the replay sources of one session do once its recording has nothing more to give. */
export class SessionGate {
  private dead = false;
  /** Told when the session asked for more than it recorded (see SessionCut). */
  onBeyond: () => void = () => undefined;

  /**
   * `last`: the run's last session, which ran to its end: asking for more than it recorded is a divergence.
   * `parent`: the session a fleet task's hand-out ran in; cutting the session cuts the hand-out too.
   */
  constructor(
    readonly last: boolean,
    private readonly parent: SessionGate | null = null,
  ) {}

  /** The recording of this session has no more of what was asked: the process died before it got it, or the replay diverged. */
  exhausted<T>(message: string): Promise<T> {
    if (this.last) return Promise.reject(new AciaError('REPLAY_DIVERGED', message));
    this.onBeyond();
    return never();
  }

  /** Work of a session that was cut off never returns. */
  run<T>(work: () => Promise<T>): Promise<T> {
    return this.isCut ? never() : work();
  }

  cut(): void {
    this.dead = true;
  }

  get isCut(): boolean {
    return this.dead || (this.parent?.isCut ?? false);
  }
}

/**
 * The recorded entries of one session, taken by the replayed one stream by stream. The session is over
 * once every stream made what it recorded and then either the session stopped by itself, or it went on
 * past its recording (asked a source or appended beyond it): the process died there, or (when the
 * session recorded its own end) stopped for a reason replay has no record of, an interrupt or a model
 * failure; its recorded end is then appended as it was, so the next session resumes from the same state.
 */
export class SessionCut {
  readonly gate: SessionGate;
  readonly done: Promise<Divergence | null>;
  private finish: (d: Divergence | null) => void = () => undefined;
  private readonly expected: Map<string, LedgerEntry[]>;
  private readonly earlier: Map<string, number>;
  private readonly recordedOrdinals: Map<number, number>;
  private readonly taken = new Map<string, number>();
  /** The session's recorded end (RUN_COMPLETED), when it stopped rather than died. */
  private readonly end: EntryOf<'RUN_COMPLETED'> | undefined;
  /** The request that stopped it, when it was cancelled while it ran: recorded just before its end. */
  private readonly cancel: EntryOf<'CANCEL_REQUESTED'> | undefined;
  private ended = false;
  private wentBeyond = false;
  private inner: RunLedger | null = null;

  constructor(session: readonly LedgerEntry[], earlier: readonly LedgerEntry[], parent: SessionGate | null = null) {
    this.gate = new SessionGate(false, parent);
    this.gate.onBeyond = () => this.beyond();
    this.expected = byStream(session);
    this.earlier = new Map([...byStream(earlier)].map(([k, v]) => [k, v.length]));
    this.recordedOrdinals = escalationOrdinals([...earlier, ...session]);
    this.end = lastOf(session, 'RUN_COMPLETED');
    this.cancel = lastOf(session, 'CANCEL_REQUESTED');
    this.done = new Promise((resolve) => (this.finish = resolve));
    this.check();
  }

  /** `inner` as this session sees it: appends checked against the recording, none after the cut. */
  ledger(inner: RunLedger): RunLedger {
    this.inner = inner;
    return {
      runId: inner.runId,
      dir: inner.dir,
      entries: () => inner.entries(),
      head: () => inner.head(),
      append: (input) => this.admit(input, () => inner.append(input)),
      putBlob: (content) => inner.putBlob(content),
      getBlob: (ref) => inner.getBlob(ref),
      close: () => Promise.resolve(),
    };
  }

  /** The first recorded entry the replayed session did not make (it stopped early), or null. */
  missing(): Divergence | null {
    let first: Divergence | null = null;
    for (const [key, list] of this.expected) {
      const x = list[0];
      if (x && (first === null || x.seq < (first.recorded?.seq ?? Infinity))) first = this.divergence(key, x, undefined);
    }
    return first;
  }

  private async admit(input: AppendInput, seal: () => Promise<LedgerEntry>): Promise<LedgerEntry> {
    if (this.gate.isCut) return never();
    if (input.type === 'RUN_RESUMED') return seal();
    if (input.type === 'RUN_COMPLETED' && this.end !== undefined && !this.ended) {
      const entry = await seal();
      this.ended = true;
      if (entry.type === 'RUN_COMPLETED' && entry.data.reason !== this.end.data.reason) this.diverge('team', this.end, entry);
      return entry;
    }
    const key = streamKey(input);
    const queue = this.expected.get(key);
    // Past what this session recorded for the stream: the process was gone before this happened.
    if (SESSION_TYPES.has(input.type) || !queue || queue.length === 0) {
      this.beyond();
      return never();
    }
    const entry = await seal();
    // An answer is matched by the place of its question (seqs move where a message was taken in elsewhere).
    const at = entry.type === 'HUMAN_RESPONSE' ? (queue[0] && sameDecision(queue[0], entry, this.recordedOrdinals, escalationOrdinals(this.inner?.entries() ?? [])) ? 0 : -1) : matchAt(queue, entry);
    if (at === -1) {
      this.diverge(key, queue[0], entry);
      return never();
    }
    queue.splice(at, 1);
    this.taken.set(key, (this.taken.get(key) ?? 0) + 1);
    this.check();
    return entry;
  }

  private beyond(): void {
    this.wentBeyond = true;
    this.check();
  }

  private check(): void {
    if (this.gate.isCut || this.left() > 0) return;
    if (this.end === undefined) {
      this.finish(null);
      return;
    }
    if (!this.wentBeyond) return;
    // It will not stop the way it did: it stops here, as recorded.
    this.gate.cut();
    const { actor, type, data } = this.end;
    const inner = this.inner;
    const request = this.cancel;
    const before = request && inner ? inner.append({ actor: request.actor, type: request.type, data: request.data }) : Promise.resolve();
    void before.then(() => inner?.append({ actor, type, data })).then(
      () => this.finish(null),
      () => this.finish(null),
    );
  }

  private diverge(key: string, recorded: LedgerEntry | undefined, replayed: LedgerEntry): void {
    this.finish(this.divergence(key, recorded, replayed));
    this.gate.cut();
  }

  private left(): number {
    let n = 0;
    for (const list of this.expected.values()) n += list.length;
    return n;
  }

  private divergence(key: string, recorded: LedgerEntry | undefined, replayed: LedgerEntry | undefined): Divergence {
    const index = (this.earlier.get(key) ?? 0) + (this.taken.get(key) ?? 0);
    return { actor: key, index, recorded: recorded ? summary(recorded) : null, replayed: replayed ? summary(replayed) : null, reason: whyDifferent(recorded, replayed) };
  }
}

/** Where `entry` is among the next recorded entries: the head, or, for a tool result, any result of the same concurrent batch. */
function matchAt(queue: readonly LedgerEntry[], entry: LedgerEntry): number {
  if (entry.type === 'TOOL_RESULT') {
    for (let i = 0; i < queue.length && queue[i]!.type === 'TOOL_RESULT'; i++) {
      const x = queue[i]!;
      if (x.type === 'TOOL_RESULT' && x.data.toolUseId === entry.data.toolUseId) return sameDecision(x, entry) ? i : -1;
    }
  }
  return queue[0] !== undefined && sameDecision(queue[0], entry) ? 0 : -1;
}
