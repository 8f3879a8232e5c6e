// Replays a fleet run's lost hand-outs. In a fleet run the orchestrator hands each dev task to a worker;
// when that worker goes away mid-task, what it recorded stays in the ledger and the orchestrator hands
// the task out again (handoutLost). Replay does the same: each lost hand-out runs the task as that
// worker did, on its own fold of the ledger and with its own recording as every source, and is cut off
// where its recording ends; then the task is handed out again, and its last hand-out runs to its end.
import { AciaError } from '../core/errors.js';
import { taskIdOf, type LedgerEntry } from '../core/ledger/entry.js';
import type { RunLedger } from '../core/ledger/types.js';
import type { TeamDeps } from './deps.js';
import { handoutLost, lostHandoutOf } from './handout.js';
import { Recorder } from './recorder.js';
import type { Divergence } from './replay-compare.js';
import { SessionCut, type SessionGate } from './replay-session.js';
import type { RunContext } from './run-context.js';
import { foldRun } from './run-state.js';
import type { TaskOutcome } from './task-common.js';
import { runDevTask } from './task-dev.js';

export interface LostHandout {
  /** Why its worker was lost, as the orchestrator recorded it. */
  why: string;
  /** What the hand-out recorded, from the attempt it started to where its worker went away. */
  entries: LedgerEntry[];
}

/** Per task, the hand-outs of a session that were lost, in order. */
export function lostHandouts(session: readonly LedgerEntry[]): Map<string, LostHandout[]> {
  const lost = new Map<string, LostHandout[]>();
  const open = new Map<string, LedgerEntry[]>();
  for (const e of session) {
    const taskId = taskIdOf(e);
    if (taskId === undefined) continue;
    const why = e.type === 'COMPENSATION_APPLIED' ? lostHandoutOf(e.data) : null;
    if (why !== null) {
      lost.set(taskId, [...(lost.get(taskId) ?? []), { why, entries: open.get(taskId) ?? [] }]);
      open.delete(taskId);
      continue;
    }
    // A hand-out starts with its task's attempt and ends with the task's outcome (or its loss).
    if (e.type === 'TASK_STARTED' && !open.has(taskId)) open.set(taskId, []);
    open.get(taskId)?.push(e);
    if (e.type === 'TASK_COMPLETED' || e.type === 'TASK_FAILED' || e.type === 'TASK_SKIPPED') open.delete(taskId);
  }
  return lost;
}

export interface HandoutReplay {
  lost: Map<string, LostHandout[]>;
  /** The session's gate: a hand-out of a session that is cut off is cut off too. */
  gate: SessionGate;
  /** The deps a hand-out runs with: its recording as every source, its ledger as the worker's own. */
  depsFor: (handout: LostHandout, earlier: readonly LedgerEntry[], gate: SessionGate, ledger: RunLedger) => Promise<TeamDeps>;
  /** A hand-out that did not do what its worker recorded stops the replay with this. */
  diverged: (d: Divergence) => void;
}

/** TeamDeps['fleet'].dispatchTask for a session whose recording lost hand-outs. */
export function replayDispatcher(r: HandoutReplay): (ctx: RunContext, taskId: string) => Promise<TaskOutcome> {
  return async (ctx, taskId) => {
    const queue = r.lost.get(taskId) ?? [];
    for (let handout = queue.shift(); handout !== undefined; handout = queue.shift()) {
      const earlier = [...ctx.rec.ledger.entries()];
      const cut = new SessionCut(handout.entries, earlier, r.gate);
      const ledger = cut.ledger(ctx.rec.ledger);
      const deps = await r.depsFor(handout, earlier, cut.gate, ledger);
      // The worker's own process: it opened the ledger, folded it, and ran the task from there.
      const state = foldRun(ledger.entries());
      const worker: RunContext = { ...ctx, deps, state, rec: new Recorder(ledger, state, deps.runtime.clock, undefined), workspace: deps.store.workspace(ctx.repo, ctx.runId) };
      const ended = await Promise.race([cut.done, runDevTask(worker, taskId).then(() => 'stopped' as const, () => 'stopped' as const)]);
      cut.gate.cut();
      const divergence = ended === 'stopped' ? cut.missing() : ended;
      if (divergence !== null) {
        r.diverged(divergence);
        throw new AciaError('REPLAY_DIVERGED', `replay: task ${taskId}'s lost hand-out did not make the decisions its worker recorded`);
      }
      await handoutLost(ctx, taskId, handout.why);
    }
    return runDevTask(ctx, taskId);
  };
}
