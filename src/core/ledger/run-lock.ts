// The per-run writer lock: one process appends to a run; a lock left by a dead process is taken over.
import { hostname } from 'node:os';
import { join } from 'node:path';
import { AciaError } from '../errors.js';
import { errnoCode, type LedgerFs } from './ledger-fs.js';

export interface LockOwner {
  pid: number;
  host: string;
  startedAt: string;
}

export interface RunLock {
  readonly path: string;
  release(): Promise<void>;
}

/**
 * Takes `<runDir>/lock`. The lock file is written in full to a temp name and then hard-linked into
 * place, so it appears atomically with its content (link fails with EEXIST if someone holds it).
 * A lock whose owner is on this host and no longer alive is stale: it is removed and taken once more.
 * (Two processes racing for the same stale lock could both win; acia runs one writer per run id, so
 * that window is accepted rather than paying for a lock server.)
 */
export async function acquireRunLock(fs: LedgerFs, runDir: string, runId: string, startedAt: string): Promise<RunLock> {
  const path = join(runDir, 'lock');
  const owner: LockOwner = { pid: process.pid, host: hostname(), startedAt };
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
      if (holder && (holder.host !== owner.host || isAlive(holder.pid))) {
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
      return { pid: value.pid, host: value.host, startedAt: String(value.startedAt) };
    }
  } catch {
    // unreadable lock content: created atomically, so it can only be damage; treat as stale
  }
  return null;
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
