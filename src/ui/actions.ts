// What a user can do to a run from the page: one entry per action, each recorded exactly as its
// terminal form records it (the entry's `run` calls the same code path the command does). Plan
// approval (issue 32), messages to a running task (issue 34) and cancel land as one entry each here;
// the page shows a control for every action whose `unavailable` says null.
import { z } from 'zod';
import type { LedgerEntry } from '../core/ledger/entry.js';
import type { RunHub } from './run-hub.js';
import { openEscalationOf } from './run-model.js';
import type { AnswerOutcome, RunStore } from './store.js';

export interface ActionContext {
  hub: RunHub;
  store: RunStore;
}

interface ActionDef<B> {
  /** The request body, parsed at the edge. */
  body: z.ZodType<B>;
  /** Why the run cannot take this action now, or null when it can. */
  unavailable(hub: RunHub, runId: string): string | null;
  run(ctx: ActionContext, runId: string, body: B): Promise<AnswerOutcome>;
}

function defineAction<B>(def: ActionDef<B>): ActionDef<B> {
  return def;
}

export const ACTIONS = {
  /** `acia resume <runId> --answer <text>` (with `--db` for a fleet run): guidance text, or retry | skip | approve | abort. */
  answer: defineAction({
    body: z.strictObject({ text: z.string().trim().min(1, 'the answer is empty').max(10_000) }),
    unavailable(hub, runId) {
      const fold = hub.fold(runId);
      if (fold === null) return `no run ${runId}`;
      return openEscalationOf(fold.state) === null ? `run ${runId} is not waiting for an answer` : null;
    },
    async run({ hub, store }, runId, body) {
      const open = openEscalationOf(hub.fold(runId)!.state)!;
      const answered = (e: LedgerEntry) => e.type === 'HUMAN_RESPONSE' && e.data.escalationSeq === open.seq;
      return store.answer(runId, body.text, hub.waitFor(runId, answered));
    },
  }),
};

export type ActionName = keyof typeof ACTIONS;

export function isActionName(s: string): s is ActionName {
  return Object.hasOwn(ACTIONS, s);
}

/** Parses the body and runs the action, or says why not. */
export async function runAction(ctx: ActionContext, name: ActionName, runId: string, raw: unknown): Promise<{ status: number; outcome: AnswerOutcome }> {
  const def = ACTIONS[name] as ActionDef<unknown>;
  const why = def.unavailable(ctx.hub, runId);
  if (why !== null) return { status: 409, outcome: { ok: false, message: why } };
  const body = def.body.safeParse(raw);
  if (!body.success) return { status: 400, outcome: { ok: false, message: body.error.issues[0]?.message ?? 'invalid request' } };
  const outcome = await def.run(ctx, runId, body.data);
  return { status: outcome.ok ? 200 : 422, outcome };
}
