// `acia cancel <runId>` on a local run, for the CLI and every front end (MCP, the web view): the run stops
// at its next safe point and its ledger ends `cancelled`. Who runs the run decides how: a live process
// holding the run's lock gets a request file beside the ledger, which its session watches (team/cancel.ts);
// a run nobody runs (waiting for a human, stopped, or left by a dead process) is closed here, under the
// lock, with the same ending a session writes (manifest, anchor, bundle, wiki).
import { systemClock } from '../core/acm/ids.js';
import { guardAciaState } from '../core/contain/clone-guard.js';
import { requireRunDir } from '../core/contain/acia-state.js';
import { clearCancelRequest, readCancelRequest, writeCancelRequest } from '../core/contain/cancel-request.js';
import { AciaError, isAciaError } from '../core/errors.js';
import { writeAnchor } from '../core/ledger/anchor.js';
import { buildBundle } from '../core/ledger/bundle.js';
import type { TerminalReason } from '../core/ledger/run-vocabulary.js';
import { openRunLedger } from '../core/ledger/file-ledger.js';
import { writeManifest } from '../core/ledger/manifest.js';
import type { RunLedger } from '../core/ledger/types.js';
import { foldRun } from '../core/run/reducer.js';
import { finishedReason } from '../core/run/state.js';
import { renderWiki } from '../core/wiki/render.js';
import { closeCancelled } from '../team/cancel.js';
import { Git, repoRoot } from '../team/git.js';
import { checkRunAnchored } from './build-deps.js';
import { whoAmI } from './who-am-i.js';

export interface CancelRunOptions {
  /** Any directory inside the repository. */
  repo: string;
  runId: string;
  /** For the anchor in the user's state directory (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** Who asks, as recorded in CANCEL_REQUESTED (default: `<user>@<host>`). */
  by?: string;
  /** Wait for a running run to stop (default true), up to `timeoutMs` (default 60 s). */
  wait?: boolean;
  timeoutMs?: number;
  /** How often to look while waiting (default 100 ms). */
  pollMs?: number;
}

export type CancelRunResult =
  /** The run's ledger ends `cancelled`: it stopped at a safe point (`wasRunning`), or nobody ran it and it was closed. */
  | { kind: 'cancelled'; runId: string; wasRunning: boolean }
  /** A process runs it and has been asked; it stops at its next safe point (not waited for, or not within the timeout). */
  | { kind: 'requested'; runId: string; timedOut: boolean }
  /** The run ended some other way before the request took effect. */
  | { kind: 'ended_first'; runId: string; reason: TerminalReason };

/**
 * Cancels a local run, wherever it runs on this machine.
 *
 * @throws AciaError RUN_NOT_FOUND (no such run), RUN_FINISHED (it ended for good already: succeeded,
 *   failed its verification, aborted or cancelled), UNSAFE_REPO (a run this user's state does not anchor).
 */
export async function cancelRun(o: CancelRunOptions): Promise<CancelRunResult> {
  const env = o.env ?? process.env;
  const root = await repoRoot(new Git(systemClock), o.repo);
  await guardAciaState(root);
  const runDir = requireRunDir(root, o.runId, { needLedger: true });
  const deadline = Date.now() + (o.timeoutMs ?? 60_000);
  let requested = false;
  for (;;) {
    let ledger: RunLedger;
    try {
      ledger = await openRunLedger(runDir, o.runId, { clock: systemClock, create: false });
    } catch (e) {
      if (!isAciaError(e) || e.code !== 'LEDGER_LOCKED') throw e;
      // A live process writes this run: ask it, then watch its lock for the end of its session.
      if (!requested) writeCancelRequest(root, o.runId, { by: o.by ?? whoAmI(), requestedAt: new Date().toISOString() });
      requested = true;
      if (o.wait === false || Date.now() > deadline) return { kind: 'requested', runId: o.runId, timedOut: o.wait !== false };
      await new Promise((r) => setTimeout(r, o.pollMs ?? 100));
      continue;
    }
    // Nobody runs it now (it ended, waits, or its process died): decide here, under the lock.
    let closed;
    try {
      const state = foldRun(ledger.entries());
      if (state.completed?.reason === 'cancelled') {
        if (requested) return { kind: 'cancelled', runId: o.runId, wasRunning: true };
        throw new AciaError('RUN_FINISHED', `run ${o.runId} is already cancelled`, { hint: `see it with \`acia show ${o.runId}\`` });
      }
      const finished = finishedReason(state);
      if (finished !== null && state.completed !== null) {
        if (requested) {
          clearCancelRequest(runDir);
          return { kind: 'ended_first', runId: o.runId, reason: state.completed.reason };
        }
        throw new AciaError('RUN_FINISHED', `run ${o.runId} is finished (${finished}); there is nothing to cancel`, { hint: `see it with \`acia show ${o.runId}\`` });
      }
      if (!state.started) throw new AciaError('RUN_NOT_FOUND', `run ${o.runId} was interrupted before it started (its ledger has no RUN_STARTED); there is nothing to cancel`);
      // Appended to only as ACIA recorded it for this user, as resume would.
      await checkRunAnchored(env, runDir, o.runId);
      const asked = readCancelRequest(runDir);
      closed = await closeCancelled(ledger, state, systemClock, { by: o.by ?? asked?.by ?? whoAmI(), requestedAt: asked?.requestedAt ?? new Date().toISOString(), via: 'local' });
    } finally {
      await ledger.close();
    }
    await writeManifest(runDir, closed);
    writeAnchor(env, runDir, o.runId, closed.head, closed.status, new Date());
    // The bundle and the wiki are conveniences the ledger can rebuild: a failure is not the cancel's.
    await buildBundle(root, o.runId, undefined, { runManifest: closed }).catch(() => undefined);
    await renderWiki(root).catch(() => undefined);
    clearCancelRequest(runDir);
    return { kind: 'cancelled', runId: o.runId, wasRunning: false };
  }
}
