// A request to cancel a local run: the file `cancel` beside its ledger (`.acia/runs/<runId>/cancel`).
// `acia cancel` writes it; the process running the run polls for it and stops at its next safe point.
// A file rather than a signal to the pid in the run's lock: a file cannot reach a stale pid's successor
// (another process, perhaps another user's), it survives the running process's restart, and whoever may
// write the run's directory may cancel it — the same right as writing its ledger.
import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { readRegularAt, writeRegularFile } from './no-follow.js';
import { runDirOf } from './acia-state.js';

const FILE = 'cancel';

const RequestFile = z.object({ by: z.string().max(200), requestedAt: z.string().max(64) });
export type CancelRequestFile = z.infer<typeof RequestFile>;

/** Writes the request for run `runId` of `repo` (the id is checked; nothing on the way is followed). */
export function writeCancelRequest(repo: string, runId: string, request: CancelRequestFile): void {
  writeRegularFile(repo, join(runDirOf(repo, runId), FILE), `${JSON.stringify(request)}\n`);
}

/**
 * The request in a run directory (one a caller has checked: requireRunDir, or the run's own session),
 * or null. A request file that does not parse is still a request, by an unknown hand; a link or a
 * special file in its place is ignored, never followed.
 */
export function readCancelRequest(runDir: string): CancelRequestFile | null {
  const read = readRegularAt(join(runDir, FILE), 4096);
  if (typeof read === 'string') return null;
  try {
    return RequestFile.parse(JSON.parse(read.content.toString('utf8')));
  } catch {
    return { by: 'unknown', requestedAt: new Date(0).toISOString() };
  }
}

/** Removes the request once it took effect (or the run ended first); a missing file is fine. */
export function clearCancelRequest(runDir: string): void {
  try {
    unlinkSync(join(runDir, FILE));
  } catch {
    // Already gone.
  }
}
