// An answer sent with `acia resume <run> --db --answer ...` is checked by the worker that resumes the run,
// against the question it answers (the plan gate's plans, the escalation's options), before anything is
// recorded: a refused answer leaves the run waiting on the same question, with the reason in its row,
// rather than ending it in `error`.
import type pg from 'pg';
import { systemClock } from '../core/acm/ids.js';
import { isAciaError } from '../core/errors.js';
import { openPgLedger } from '../core/ledger/pg-ledger.js';
import { foldRun } from '../core/run/reducer.js';
import { openEscalation } from '../core/run/state.js';
import { setRunStatus } from './fleet-db.js';

/** Whether `e` is a resume refusing its answer (a usage or validation error thrown before any entry). */
export function isRefusedAnswer(answer: string | undefined, e: unknown): boolean {
  return answer !== undefined && isAciaError(e) && (e.code === 'USAGE' || e.code === 'INPUT_INVALID');
}

/** Puts the run back to the status of the question still open, with why the answer was refused. */
export async function keepWaiting(db: pg.Pool, runId: string, epoch: number, dir: string, why: string): Promise<string> {
  const ledger = await openPgLedger(db, runId, { clock: systemClock, create: false, dir, fence: { epoch } });
  let status: string;
  try {
    const open = openEscalation(foldRun(ledger.entries()));
    status = open?.reason === 'budget_exceeded' ? 'budget_exhausted' : 'awaiting_human';
  } finally {
    await ledger.close();
  }
  await setRunStatus(db, runId, { status, message: `your answer was refused: ${why}; the run still waits for one` }, epoch);
  return status;
}
