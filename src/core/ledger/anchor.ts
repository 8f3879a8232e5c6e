// The run's head anchored outside the checkout. `manifest.json` sits next to the ledger, so whoever can
// write one (a hostile clone, a tarball) can re-seal both: a forged "unfinished" run would pass the chain
// checks. The anchor lives in the user's own state directory, keyed by the run directory's real path and
// the run id; a run ACIA never recorded there for this user is not theirs to resume.
import { createHash } from 'node:crypto';
import { mkdirSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { userStateDir } from '../config/trust.js';
import { AciaError, errorMessage } from '../errors.js';
import { readRegularFile, writeRegularFile } from '../contain/no-follow.js';
import type { LedgerHead } from './types.js';

export const RunAnchor = z.object({
  runId: z.string(),
  runDir: z.string(),
  /** The ledger head when the anchor was written; null before the first entry. */
  head: z.object({ seq: z.number().int().nonnegative(), hash: z.string() }).nullable(),
  /** `running` while a session is under way: entries past the head are that session's. */
  status: z.string(),
  updatedAt: z.string(),
});
export type RunAnchor = z.infer<typeof RunAnchor>;

function realRunDir(runDir: string): string {
  try {
    return realpathSync(runDir);
  } catch {
    return resolve(runDir);
  }
}

export function anchorPath(env: NodeJS.ProcessEnv, runDir: string, runId: string): string {
  const key = createHash('sha256').update(realRunDir(runDir)).digest('hex').slice(0, 32);
  return join(userStateDir(env), 'anchors', key, `${runId}.json`);
}

export function writeAnchor(env: NodeJS.ProcessEnv, runDir: string, runId: string, head: LedgerHead | null, status: string, now: Date): void {
  const path = anchorPath(env, runDir, runId);
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const value: RunAnchor = { runId, runDir: realRunDir(runDir), head, status, updatedAt: now.toISOString() };
    writeRegularFile(dirname(path), path, `${JSON.stringify(value)}\n`);
  } catch (e) {
    throw new AciaError('LEDGER_IO', `cannot write the run's anchor ${path}: ${errorMessage(e)}`, { cause: e });
  }
}

/** The anchor of a run, or null when this user's state has none. A damaged anchor is LEDGER_CORRUPT. */
export function readAnchor(env: NodeJS.ProcessEnv, runDir: string, runId: string): RunAnchor | null {
  const path = anchorPath(env, runDir, runId);
  const bytes = readRegularFile(dirname(path), path);
  if (bytes === null) return null;
  try {
    return RunAnchor.parse(JSON.parse(bytes.toString('utf8')));
  } catch (e) {
    throw new AciaError('LEDGER_CORRUPT', `${path}: not a run anchor (${errorMessage(e)})`);
  }
}
