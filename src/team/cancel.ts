// Cancelling a run: what the team knows of it. A run is told to stop by a watch (a request file beside
// a local run's ledger, the run's row in a fleet's database); the session that runs it aborts its model
// calls and commands through the run's abort signal, stops at its next safe point and ends `cancelled`.
// A run nobody runs (waiting for a human, stopped by its budget or an error, or whose process died) is
// closed by whoever holds its ledger: the request and the end are recorded, nothing else happens.
import { clearCancelRequest, readCancelRequest } from '../core/contain/cancel-request.js';
import type { Clock } from '../core/acm/ids.js';
import type { EventDataOf } from '../core/ledger/events.js';
import type { RunManifest } from '../core/ledger/run-vocabulary.js';
import type { RunLedger } from '../core/ledger/types.js';
import type { RunState } from '../core/run/state.js';
import { Recorder } from './recorder.js';

export type CancelRequest = Omit<EventDataOf<'CANCEL_REQUESTED'>, 'wasRunning'>;

/** A session's view of requests to cancel its run: `signal` aborts when one arrives. */
export interface CancelWatch {
  readonly signal: AbortSignal;
  /** The request, once one arrived. */
  request(): CancelRequest | null;
  /** The session ended: stop watching (and drop a request that took effect). */
  stop(): void;
}

/** Starts watching run `runId` (its directory `runDir`) for a request to cancel it. */
export type CancelWatcher = (runDir: string, runId: string) => CancelWatch;

/** How often a local run looks for its request file: a stat of one path, cheap enough to do often. */
const FILE_POLL_MS = 250;

/** A local run's watch: the request file `acia cancel` writes beside the ledger (core/contain/cancel-request.ts). */
export function fileCancelWatch(pollMs = FILE_POLL_MS): CancelWatcher {
  return (runDir) => {
    const controller = new AbortController();
    let request: CancelRequest | null = null;
    const look = (): void => {
      let found;
      try {
        found = readCancelRequest(runDir);
      } catch {
        return;
      }
      if (found === null) return;
      request = { ...found, via: 'local' };
      clearInterval(timer);
      controller.abort(new Error(`cancelled by ${found.by}`));
    };
    const timer = setInterval(look, pollMs);
    timer.unref();
    look();
    return {
      signal: controller.signal,
      request: () => request,
      stop: () => {
        clearInterval(timer);
        if (request !== null) clearCancelRequest(runDir);
      },
    };
  };
}

/** RUN_COMPLETED's message for a cancelled run. */
export function cancelledMessage(request: CancelRequest, wasRunning: boolean): string {
  return `cancelled by ${request.by}${wasRunning ? '; it stopped at its next safe point' : ''}`;
}

/**
 * Closes a run nobody runs: records the request and RUN_COMPLETED `cancelled` with what the ledger last
 * knew (branch head, files, cost), and returns the manifest to anchor. The caller holds the ledger (its
 * lock, or a fleet lease) and writes the manifest, anchor and wiki as a session's end would.
 */
export async function closeCancelled(ledger: RunLedger, state: RunState, clock: Clock, request: CancelRequest): Promise<RunManifest> {
  const rec = new Recorder(ledger, state, clock, undefined);
  // A session that recorded the request died before its end: the end is what is missing.
  if (state.cancelRequested === null) await rec.record('human', 'CANCEL_REQUESTED', { ...request, wasRunning: false });
  const last = state.completed;
  const runBranch = state.started?.runBranch ?? `acia/${ledger.runId}`;
  const costUsd = state.costKnown ? Math.round(state.costUsd * 1e6) / 1e6 : null;
  await rec.record('team', 'RUN_COMPLETED', {
    reason: 'cancelled',
    message: cancelledMessage(request, false),
    runBranch,
    headCommit: last?.headCommit ?? state.runHead,
    filesChanged: last?.filesChanged ?? [],
    costUsd,
    tokens: state.tokens,
    durationMs: 0,
  });
  const entries = ledger.entries();
  return {
    runId: ledger.runId,
    status: 'cancelled',
    goal: state.started?.goal.intent ?? '',
    head: ledger.head(),
    startedAt: entries[0]?.ts ?? clock.now().toISOString(),
    updatedAt: clock.now().toISOString(),
    costUsd,
    runBranch,
  };
}
