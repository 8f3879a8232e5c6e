// The per-run writer lock: one process appends to a run; a lock left by a dead process is taken over.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { AciaError } from '../errors.js';
import { errnoCode, type LedgerFs } from './ledger-fs.js';

export interface LockOwner {
  pid: number;
  host: string;
  startedAt: string;
  /**
   * When the owner process started, in the kernel's ticks since boot (/proc/<pid>/stat), where Linux says:
   * with it a pid the system handed to another process since (the owner died, the pid was reused, perhaps
   * by another user) is told apart from the owner itself.
   */
  procStart?: number;
}

export interface RunLock {
  readonly path: string;
  release(): Promise<void>;
}

/** The live writer of a run (this host's, or another host's, which cannot be checked), from its lock; null when nobody holds it. */
export async function lockHolder(fs: LedgerFs, runDir: string): Promise<LockOwner | null> {
  const holder = await readOwner(fs, join(runDir, 'lock'));
  if (holder === null) return null;
  return holder.host !== hostname() || ownerAlive(holder) ? holder : null;
}

/**
 * Takes `<runDir>/lock`. The lock file is written in full to a temp name and then hard-linked into
 * place, so it appears atomically with its content (link fails with EEXIST if someone holds it).
 * A lock whose owner is on this host and no longer alive (or whose pid a later process was given) is
 * stale: it is removed and taken once more.
 * (Two processes racing for the same stale lock could both win; acia runs one writer per run id, so
 * that window is accepted rather than paying for a lock server.)
 */
export async function acquireRunLock(fs: LedgerFs, runDir: string, runId: string, startedAt: string): Promise<RunLock> {
  const path = join(runDir, 'lock');
  const procStart = processStartTicks(process.pid);
  const owner: LockOwner = { pid: process.pid, host: hostname(), startedAt, ...(procStart === null ? {} : { procStart }) };
  const tmp = join(runDir, `.lock.${process.pid}.${Date.now()}.tmp`);
  try {
    await fs.writeFile(tmp, `${JSON.stringify(owner)}\n`, { flag: 'wx' });
  } catch (e) {
    throw new AciaError('LEDGER_IO', `cannot write lock file ${tmp}: ${(e as Error).message}`, { cause: e });
  }
  try {
    for (let tries = 0; tries < 2; tries += 1) {
      try {
        await fs.link(tmp, path);
        return { path, release: () => releaseLock(fs, path, owner) };
      } catch (e) {
        if (errnoCode(e) !== 'EEXIST') throw new AciaError('LEDGER_IO', `cannot create lock ${path}: ${(e as Error).message}`, { cause: e });
      }
      const holder = await readOwner(fs, path);
      if (holder && (holder.host !== owner.host || ownerAlive(holder))) {
        throw new AciaError('LEDGER_LOCKED', `run ${runId} is in use by pid ${holder.pid} on ${holder.host}`, {
          hint: `wait for it to finish, or if that process is gone remove ${path}`,
        });
      }
      await fs.unlink(path).catch(() => undefined);
    }
    throw new AciaError('LEDGER_LOCKED', `run ${runId} is in use (lock ${path} keeps reappearing)`);
  } finally {
    await fs.unlink(tmp).catch(() => undefined);
  }
}

async function readOwner(fs: LedgerFs, path: string): Promise<LockOwner | null> {
  try {
    const value = JSON.parse(await fs.readFile(path, 'utf8')) as Partial<LockOwner>;
    if (typeof value.pid === 'number' && typeof value.host === 'string') {
      return { pid: value.pid, host: value.host, startedAt: String(value.startedAt), ...(typeof value.procStart === 'number' ? { procStart: value.procStart } : {}) };
    }
  } catch {
    // unreadable lock content: created atomically, so it can only be damage; treat as stale
  }
  return null;
}

/**
 * Whether the process that wrote a lock on this host still runs: its pid is alive and, where the lock
 * recorded the owner's start time, the process with that pid started then (not a later process that was
 * given the same pid, which may belong to another user and must not be mistaken for the run's writer).
 */
export function ownerAlive(owner: LockOwner): boolean {
  if (!isAlive(owner.pid)) return false;
  if (owner.procStart === undefined) return true;
  const now = processStartTicks(owner.pid);
  return now === null || now === owner.procStart;
}

/** Field 22 of /proc/<pid>/stat (after the command name, which may hold spaces and parentheses); null off Linux. */
export function processStartTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[19]);
    return Number.isFinite(ticks) ? ticks : null;
  } catch {
    return null;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return errnoCode(e) !== 'ESRCH';
  }
}

async function releaseLock(fs: LedgerFs, path: string, owner: LockOwner): Promise<void> {
  const holder = await readOwner(fs, path);
  if (holder && holder.pid === owner.pid && holder.host === owner.host) await fs.unlink(path).catch(() => undefined);
}
