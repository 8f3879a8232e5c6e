// `acia cancel <runId> --db`: a fleet run stops at its next safe point and its ledger ends `cancelled`.
// The submitter marks its own row (`cancel_requested_at`, which row-level security lets only it and the
// owner set); the workers do the rest. A run never taken is cancelled in that same statement and never
// starts; a running run's orchestrator and task workers watch the rows of the runs they hold and abort
// them; a run nobody holds (waiting for an answer, stopped on its budget or an error) goes back to the
// queue, and the worker that takes its job closes its ledger instead of running it.
import type pg from 'pg';
import { systemClock } from '../core/acm/ids.js';
import { requireRunId } from '../core/contain/run-id.js';
import { AciaError } from '../core/errors.js';
import { openPgLedger } from '../core/ledger/pg-ledger.js';
import { retryTransient } from '../core/ledger/pg-retry.js';
import { foldRun } from '../core/run/reducer.js';
import { finishedReason } from '../core/run/state.js';
import { cancelledMessage, closeCancelled, type CancelRequest, type CancelWatch, type CancelWatcher } from '../team/cancel.js';
import { setRunStatus, type FleetClient } from './fleet-db.js';
import { REQUEST_CHANNEL } from './submit.js';

/** Statuses a run does not leave: nothing to cancel. */
const FINAL = ['succeeded', 'verification_failed', 'failed', 'aborted', 'cancelled'];
/** Statuses of a run nobody holds that still has a future: a worker closes its ledger. */
const STOPPED = ['awaiting_human', 'budget_exhausted', 'error'];

export type FleetCancelResult =
  | { kind: 'cancelled'; runId: string; wasRunning: boolean; beforeStart: boolean }
  | { kind: 'requested'; runId: string; status: string; timedOut: boolean }
  | { kind: 'ended_first'; runId: string; reason: string };

/**
 * Asks for fleet run `runId` to stop, as this session's role (only its own runs, unless it owns the
 * fleet), and with `wait` waits for the run's row to say how it ended.
 *
 * @throws AciaError RUN_NOT_FOUND (no such run of yours), RUN_FINISHED (it ended for good already).
 */
export async function cancelFleetRun(fleet: FleetClient, runId: string, o: { wait?: boolean; timeoutMs?: number; pollMs?: number } = {}): Promise<FleetCancelResult> {
  requireRunId(runId, 'the fleet database', 'list fleet runs with `acia runs --db ...`');
  let status: string | null = null;
  for (let tries = 0; status === null; tries++) {
    const row = (await fleet.db.query<{ status: string }>('SELECT status FROM acia_runs WHERE run_id = $1', [runId])).rows[0];
    if (!row) throw new AciaError('RUN_NOT_FOUND', `no fleet run ${runId} that you submitted`, { hint: 'a fleet run belongs to the database role that submitted it; list yours with `acia runs --db ...`' });
    if (row.status === 'cancelled') throw new AciaError('RUN_FINISHED', `fleet run ${runId} is already cancelled`);
    if (FINAL.includes(row.status)) throw new AciaError('RUN_FINISHED', `fleet run ${runId} is finished (${row.status}); there is nothing to cancel`, { hint: `see it with \`acia show ${runId} --db\`` });
    // One statement decides, against the status just read: a queued run no worker has begun is cancelled
    // here and never starts; a stopped one is requested back for a worker to close; a running one is marked.
    const never = `status = 'queued' AND NOT EXISTS (SELECT 1 FROM acia_ledger l WHERE l.run_id = $1)`;
    const stopped = `status = ANY($3)`;
    const r = await fleet.db.query<{ status: string }>(
      `UPDATE acia_runs SET
         cancel_requested_at = COALESCE(cancel_requested_at, now()),
         cancel_requested_by = COALESCE(cancel_requested_by, current_user),
         status = CASE WHEN ${never} THEN 'cancelled' WHEN ${stopped} THEN 'queued' ELSE status END,
         message = CASE WHEN ${never} THEN 'cancelled before it started' WHEN ${stopped} THEN 'cancel requested; a worker closes its ledger' ELSE message END,
         requested_at = CASE WHEN ${stopped} THEN now() ELSE requested_at END,
         updated_at = now()
       WHERE run_id = $1 AND status = $2 RETURNING status`,
      [runId, row.status, STOPPED],
    );
    if (r.rows[0]) status = r.rows[0].status;
    else if (tries >= 5) throw new AciaError('INTERNAL', `fleet run ${runId} keeps changing its status; try again`);
  }
  if (status === 'cancelled') return { kind: 'cancelled', runId, wasRunning: false, beforeStart: true };
  // A stopped run's closing job goes out through the workers' dispatcher (a submitter cannot touch the queue).
  await fleet.db.query(`NOTIFY ${REQUEST_CHANNEL}`).catch(() => undefined);
  if (o.wait === false) return { kind: 'requested', runId, status, timedOut: false };
  const wasRunning = status === 'running';
  const deadline = Date.now() + (o.timeoutMs ?? 60_000);
  for (;;) {
    await new Promise((r) => setTimeout(r, o.pollMs ?? 200));
    const now = (await retryTransient(() => fleet.db.query<{ status: string }>('SELECT status FROM acia_runs WHERE run_id = $1', [runId]))).rows[0]?.status ?? 'missing';
    if (now === 'cancelled') return { kind: 'cancelled', runId, wasRunning, beforeStart: false };
    if (FINAL.includes(now)) return { kind: 'ended_first', runId, reason: now };
    if (Date.now() > deadline) return { kind: 'requested', runId, status: now, timedOut: true };
  }
}

/** The cancel requests among `runIds`: who asked, and when (ISO, UTC). */
async function cancelRequests(db: pg.Pool, runIds: string[]): Promise<Map<string, CancelRequest>> {
  const r = await db.query<{ run_id: string; by: string | null; at: string }>(
    `SELECT run_id, cancel_requested_by AS by, to_char(cancel_requested_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at
     FROM acia_runs WHERE run_id = ANY($1) AND cancel_requested_at IS NOT NULL`,
    [runIds],
  );
  return new Map(r.rows.map((row) => [row.run_id, { by: row.by ?? 'unknown', requestedAt: row.at, via: 'fleet' }]));
}

/** Who asked to cancel run `runId`, and when; null when nobody did. */
export async function cancelRequestOf(db: pg.Pool, runId: string): Promise<CancelRequest | null> {
  return (await retryTransient(() => cancelRequests(db, [runId]))).get(runId) ?? null;
}

/**
 * A worker closes a cancelled run nobody runs, holding its lease at `epoch`: the ledger (if the run ever
 * started) gets the request and RUN_COMPLETED `cancelled`, the row the same status. A run that ended for
 * good meanwhile keeps its end.
 */
export async function closeFleetRun(db: pg.Pool, runId: string, epoch: number, request: CancelRequest, dir: string): Promise<string> {
  const started = (await retryTransient(() => db.query('SELECT 1 FROM acia_ledger WHERE run_id = $1 LIMIT 1', [runId]))).rowCount !== 0;
  if (!started) {
    await setRunStatus(db, runId, { status: 'cancelled', message: 'cancelled before it started' }, epoch);
    return 'cancelled';
  }
  const ledger = await openPgLedger(db, runId, { clock: systemClock, create: false, dir, fence: { epoch } });
  try {
    const state = foldRun(ledger.entries());
    if (state.completed !== null && (state.completed.reason === 'cancelled' || finishedReason(state) !== null)) {
      await setRunStatus(db, runId, { status: state.completed.reason, message: state.completed.message }, epoch);
      return state.completed.reason;
    }
    const manifest = await closeCancelled(ledger, state, systemClock, request);
    await setRunStatus(db, runId, { status: 'cancelled', message: cancelledMessage(request, false), cost_usd: manifest.costUsd, head_seq: manifest.head?.seq ?? null, head_hash: manifest.head?.hash ?? null }, epoch);
    return 'cancelled';
  } finally {
    await ledger.close();
  }
}

/**
 * A worker's watch over the runs it holds (as orchestrator or for a task): one query every `pollMs` for
 * all of them, and each session's signal aborts when its run's row asks to stop.
 */
export class FleetCancelWatch {
  private readonly watching = new Map<string, Set<{ controller: AbortController; request: CancelRequest | null }>>();
  private timer: NodeJS.Timeout | null = null;
  private busy = false;

  constructor(
    private readonly db: pg.Pool,
    private readonly pollMs = 500,
  ) {}

  /** For TeamDeps.runtime.cancelWatch. */
  readonly watcher: CancelWatcher = (_runDir, runId) => this.watch(runId);

  watch(runId: string): CancelWatch {
    const w = { controller: new AbortController(), request: null as CancelRequest | null };
    const set = this.watching.get(runId) ?? new Set();
    set.add(w);
    this.watching.set(runId, set);
    this.timer ??= setInterval(() => void this.poll(), this.pollMs);
    // A request made while the job waited in the queue is seen at once.
    void this.poll();
    return {
      signal: w.controller.signal,
      request: () => w.request,
      stop: () => {
        set.delete(w);
        if (set.size === 0) this.watching.delete(runId);
        if (this.watching.size === 0 && this.timer) {
          clearInterval(this.timer);
          this.timer = null;
        }
      },
    };
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async poll(): Promise<void> {
    if (this.busy || this.watching.size === 0) return;
    this.busy = true;
    try {
      for (const [runId, request] of await cancelRequests(this.db, [...this.watching.keys()])) {
        for (const w of this.watching.get(runId) ?? []) {
          if (w.request !== null) continue;
          w.request = request;
          w.controller.abort(new Error(`cancelled by ${request.by}`));
        }
      }
    } catch {
      // The database is away for a moment: the next poll asks again.
    } finally {
      this.busy = false;
    }
  }
}
