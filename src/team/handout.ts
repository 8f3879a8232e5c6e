// A dev task handed to another process (a fleet worker) whose hand-out was lost: its worker went away,
// or a later hand-out fenced it. The fleet's dispatcher records it here, and so does replay when it
// replays a recorded loss, so both record the same decision.
import type { EventDataOf } from '../core/ledger/events.js';
import type { RunContext } from './run-context.js';

const RESTARTS = 'the attempt restarts from its last checkpoint on another worker';

/** Folds what the lost worker recorded, then records that the task's attempt restarts from its last checkpoint. */
export async function handoutLost(ctx: RunContext, taskId: string, why: string): Promise<void> {
  await ctx.rec.sync();
  const t = ctx.state.tasks.get(taskId);
  await ctx.rec.record('team', 'COMPENSATION_APPLIED', { taskId, reason: `${why}; ${RESTARTS}`, resetTo: t?.lastCheckpoint ?? 'run head', handoutLost: why });
}

/** Why a recorded compensation is a lost hand-out, or null when it is another kind (runs before the field was recorded included). */
export function lostHandoutOf(d: EventDataOf<'COMPENSATION_APPLIED'>): string | null {
  if (d.handoutLost !== undefined) return d.handoutLost;
  return d.reason.endsWith(`; ${RESTARTS}`) ? d.reason.slice(0, -`; ${RESTARTS}`.length) : null;
}
