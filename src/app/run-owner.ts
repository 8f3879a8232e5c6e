// The process on this host that is driving a run: the holder of its ledger's writer lock (core/ledger's
// run lock), checked to be alive and to be ACIA (a lock left by a crash may name a pid that was reused).
// Front ends use it to tell "running elsewhere" from "interrupted" (a run is stopped through its cancel
// request file, app/cancel-run.ts, never by a signal to this pid).
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import { readRegularFile } from '../core/contain/no-follow.js';

/** The pid holding `runDir`'s lock on this host when it is a live ACIA process, else null. */
export function runOwnerPid(repo: string, runDir: string): number | null {
  let owner: { pid?: unknown; host?: unknown };
  try {
    const bytes = readRegularFile(repo, join(runDir, 'lock'), 4096);
    if (bytes === null) return null;
    owner = JSON.parse(bytes.toString('utf8')) as typeof owner;
  } catch {
    return null;
  }
  if (typeof owner.pid !== 'number' || !Number.isInteger(owner.pid) || owner.pid <= 1 || owner.host !== hostname()) return null;
  return isAciaProcess(owner.pid) ? owner.pid : null;
}

/**
 * Alive, and started from ACIA's CLI script (`.../acia` or `.../acia.js`): a pid reused by another program
 * does not make a dead run look alive. Needs /proc; elsewhere nothing is claimed to be running.
 */
function isAciaProcess(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  let argv: string[];
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return false;
  }
  return argv.slice(1, 3).some((a) => basename(a) === 'acia' || basename(a) === 'acia.js');
}
