// Messages from humans to a running team: taken in from the run's inbox (core/contain/message-request.ts),
// recorded (MESSAGE_RECEIVED), and handed to the agent they are for at the point their mode asks for
// (MESSAGE_DELIVERED). A replay hands each recorded message to the same agent at the recorded point, so
// the requests it makes are the recorded ones, byte for byte.
import type { AgentInbox, InboxPoint } from '../agents/inbox.js';
import { takeMessageRequests, type TakenBatch } from '../core/contain/message-request.js';
import { dataOf, type LedgerEntry } from '../core/ledger/entry.js';
import type { EventDataOf } from '../core/ledger/events.js';
import { pendingMessages } from '../core/run/state.js';
import type { RunContext } from './run-context.js';

type Delivery = EventDataOf<'MESSAGE_DELIVERED'>;
type Received = EventDataOf<'MESSAGE_RECEIVED'>;

export interface Mailbox {
  /**
   * Starts taking messages in for the session (a live run polls its inbox); `stop` when the session ends.
   * Resolves once what waited in the inbox is recorded, so an agent's first request has it.
   */
  start(ctx: RunContext): Promise<void>;
  stop(): void;
  /** The inbox of one agent session: messages to `to` (a task id, or `pm`), recorded as delivered to `taskId`'s `caller`. */
  inboxFor(ctx: RunContext, to: string, taskId: string, caller: string): AgentInbox;
  /**
   * Messages to the PM that the executor acts on now (it has a plan, pauses new tasks, and none runs when it
   * calls `deliver`): `deliver` records them as delivered to the PM amending the plan and returns their texts.
   */
  pmDue(ctx: RunContext): { deliver: () => Promise<{ ids: string[]; texts: string[] }> } | null;
}

/** How a message reads to the model: who sent it, and that it comes from the human directing the team. */
export function messageText(m: Pick<Received, 'author' | 'mode' | 'text'>): string {
  return `Message from the human directing the team (${m.author}, ${m.mode}):\n${m.text}`;
}

const TERMINAL = new Set(['completed', 'failed', 'skipped']);

/** Why a message to `to` cannot be delivered in this run's state, or null. */
export function refusalFor(ctx: Pick<RunContext, 'state'>, to: string): string | null {
  if (ctx.state.completed !== null && ctx.state.completed.reason === 'succeeded') return 'the run has finished';
  if (to === 'pm') return null;
  const task = ctx.state.tasks.get(to);
  // Plans waiting at the approval gate: a task of one of them can be told something before it starts.
  if (!task && !ctx.state.plan && ctx.state.planSet?.plans.some((p) => p.tasks.some((t) => t.id === to))) return null;
  if (!task) return ctx.state.plan ? `the plan has no task ${to}` : ctx.state.planSet ? `no proposed plan has a task ${to}` : `there is no plan yet, so no task ${to}`;
  if (TERMINAL.has(task.status)) return `task ${to} is ${task.status}; a message can no longer reach it`;
  return null;
}

/**
 * Where a live session takes messages from: each call hands over what waits for it, removed from the
 * source by the batch's `done` once recorded. A local run's inbox files; a fleet run's rows in the
 * database (src/fleet/messages.ts).
 */
export type MessageSource = (ctx: RunContext) => Promise<TakenBatch>;

/** A local run's inbox beside its ledger (core/contain/message-request.ts). */
export const inboxFiles: MessageSource = (ctx) => Promise.resolve(takeMessageRequests(ctx.runDir));

/** A live session's mailbox: polls its message source, records what it takes in, delivers from the folded state. */
export class LiveMailbox implements Mailbox {
  private timer: NodeJS.Timeout | null = null;
  /** The controller of each agent session's model call in flight, by recipient (interrupts abort it). */
  private readonly calls = new Map<string, Set<AbortController>>();
  private polling: Promise<void> = Promise.resolve();

  constructor(
    private readonly source: MessageSource = inboxFiles,
    private readonly pollMs = 200,
  ) {}

  start(ctx: RunContext): Promise<void> {
    const poll = () => void this.poll(ctx);
    this.timer = setInterval(poll, this.pollMs);
    this.timer.unref();
    return this.poll(ctx);
  }

  /** One look at the inbox, after the one under way: polls never take the same file twice. */
  private poll(ctx: RunContext): Promise<void> {
    this.polling = this.polling.then(() => this.takeIn(ctx)).catch(() => undefined);
    return this.polling;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async takeIn(ctx: RunContext): Promise<void> {
    const batch = await this.source(ctx);
    try {
      for (const taken of batch.messages) {
        // A file this user did not write (or that is no message) speaks for nobody: it is dropped unrecorded.
        if (!taken.ok) continue;
        const r = taken.request;
        // Recorded already: by this session before a `done` that failed, or by one that died before its `done`.
        if (ctx.state.messages.some((m) => m.id === r.id)) continue;
        const refused = refusalFor(ctx, r.to);
        await ctx.rec.record('human', 'MESSAGE_RECEIVED', { id: r.id, author: r.author, to: r.to, mode: r.mode, text: r.text, ...(refused === null ? {} : { refused }) });
        if (refused === null && r.mode === 'interrupt') for (const c of this.calls.get(r.to) ?? []) c.abort(new Error('interrupted by a message'));
      }
    } catch (e) {
      // Not all recorded: every message goes back to the source, and the next look skips those recorded.
      await batch.release().catch(() => undefined);
      throw e;
    }
    await batch.done();
  }

  inboxFor(ctx: RunContext, to: string, taskId: string, caller: string): AgentInbox {
    let current: AbortController | null = null;
    return {
      take: async (point) => {
        // A look at the inbox first: a message sent before this point reaches it here, whatever the poll's timing.
        await this.poll(ctx);
        const due = pendingMessages(ctx.state, to).filter((m) => point.at !== 'tool_boundary' || m.mode !== 'queue');
        for (const m of due) await ctx.rec.record(caller, 'MESSAGE_DELIVERED', deliveryAt(m.id, taskId, caller, point));
        return due.map(messageText);
      },
      callSignal: () => {
        const set = this.calls.get(to) ?? new Set<AbortController>();
        this.calls.set(to, set);
        if (current) set.delete(current);
        current = new AbortController();
        set.add(current);
        if (pendingMessages(ctx.state, to).some((m) => m.mode === 'interrupt')) current.abort(new Error('interrupted by a message'));
        return current.signal;
      },
    };
  }

  pmDue(ctx: RunContext): { deliver: () => Promise<{ ids: string[]; texts: string[] }> } | null {
    if (!ctx.state.plan || pendingMessages(ctx.state, 'pm').length === 0) return null;
    return {
      deliver: async () => {
        const due = pendingMessages(ctx.state, 'pm');
        for (const m of due) await ctx.rec.record('pm', 'MESSAGE_DELIVERED', { id: m.id, taskId: 'amend', caller: 'pm', turn: 0, at: 'turn', tasksStarted: ctx.state.taskStarts });
        return { ids: due.map((m) => m.id), texts: due.map(messageText) };
      },
    };
  }
}

function deliveryAt(id: string, taskId: string, caller: string, point: InboxPoint): Delivery {
  return { id, taskId, caller, turn: point.turn, at: point.at, ...('afterToolUseId' in point ? { afterToolUseId: point.afterToolUseId } : {}) };
}

/** A replay's mailbox: every recorded delivery, handed over where it was made. Nothing is polled. */
export class ReplayMailbox implements Mailbox {
  private readonly received = new Map<string, Received>();
  private readonly deliveries: Delivery[];

  /** `session`: the session's entries (the deliveries to make); `received`: where the messages were taken in (any session). */
  constructor(
    private readonly session: readonly LedgerEntry[],
    received: readonly LedgerEntry[] = session,
  ) {
    for (const m of dataOf(received, 'MESSAGE_RECEIVED')) this.received.set(m.id, m);
    this.deliveries = dataOf(session, 'MESSAGE_DELIVERED');
  }

  /**
   * Messages this session took in and did not deliver (refused, for a later session, or the run ended
   * first), taken in now: the session's replay makes every entry its recording has.
   */
  async start(ctx: RunContext): Promise<void> {
    const delivered = new Set(this.deliveries.map((d) => d.id));
    for (const e of this.session) {
      if (e.type !== 'MESSAGE_RECEIVED' || delivered.has(e.data.id)) continue;
      if (!ctx.state.messages.some((m) => m.id === e.data.id)) await ctx.rec.record('human', 'MESSAGE_RECEIVED', e.data);
    }
  }
  stop(): void {}

  private async hand(ctx: RunContext, match: (d: Delivery) => boolean): Promise<Delivery[]> {
    const due: Delivery[] = [];
    for (let i = 0; i < this.deliveries.length; ) {
      const d = this.deliveries[i]!;
      if (match(d)) {
        due.push(d);
        this.deliveries.splice(i, 1);
      } else i++;
    }
    for (const d of due) {
      // The message is taken in where it is delivered (the recording took it in whenever a poll saw it):
      // so the entries after it keep their recorded seqs, which lessons and reports cite.
      const m = this.received.get(d.id);
      if (m && !ctx.state.messages.some((x) => x.id === d.id)) await ctx.rec.record('human', 'MESSAGE_RECEIVED', m);
      await ctx.rec.record(d.caller, 'MESSAGE_DELIVERED', d);
    }
    return due;
  }

  private texts(due: Delivery[]): string[] {
    return due.flatMap((d) => {
      const m = this.received.get(d.id);
      return m ? [messageText(m)] : [];
    });
  }

  inboxFor(ctx: RunContext, _to: string, taskId: string, caller: string): AgentInbox {
    return {
      take: async (point) => {
        // Messages that interrupted a call went out with the turn's request: a replay makes no call to interrupt.
        const at = (d: Delivery) => (point.at === 'turn' ? d.at === 'turn' || d.at === 'interrupt' : d.at === point.at && d.afterToolUseId === ('afterToolUseId' in point ? point.afterToolUseId : undefined));
        return this.texts(await this.hand(ctx, (d) => d.taskId === taskId && d.caller === caller && d.turn === point.turn && at(d)));
      },
      callSignal: () => undefined,
    };
  }

  pmDue(ctx: RunContext): { deliver: () => Promise<{ ids: string[]; texts: string[] }> } | null {
    const next = this.deliveries.find((d) => d.taskId === 'amend');
    if (!next || !ctx.state.plan || (next.tasksStarted ?? 0) > ctx.state.taskStarts) return null;
    return {
      deliver: async () => {
        const due = await this.hand(ctx, (d) => d.taskId === 'amend' && d.tasksStarted === next.tasksStarted);
        return { ids: due.map((d) => d.id), texts: this.texts(due) };
      },
    };
  }
}
