// A pids cgroup per sandboxed command: the process-count limit that still holds when ACIA runs as root,
// where RLIMIT_NPROC is ignored (the kernel exempts host uid 0, even inside a user namespace).
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { randomBytes } from 'node:crypto';

const CANDIDATES = ['/sys/fs/cgroup/pids', '/sys/fs/cgroup'];

export interface PidsCgroup {
  /** The file a process writes its pid into to join. */
  procsFile: string;
  remove(): void;
  /** True when the kernel killed a process of this cgroup for passing memory.max. */
  oomKilled(): boolean;
}

/**
 * Creates a pids cgroup limited to `max` (and, on cgroup v2 with the memory controller delegated, to
 * `memoryMax` bytes with no swap), or null when this host does not let us (not root, no controller).
 */
export function createPidsCgroup(max: number, memoryMax?: number): PidsCgroup | null {
  if (typeof process.geteuid !== 'function' || process.geteuid() !== 0) return null;
  for (const base of CANDIDATES) {
    if (!usable(base)) continue;
    const dir = nodePath.join(base, `acia-${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      fs.mkdirSync(dir);
      fs.writeFileSync(nodePath.join(dir, 'pids.max'), String(max));
      if (memoryMax !== undefined && hasController(base, 'memory')) {
        fs.writeFileSync(nodePath.join(dir, 'memory.max'), String(memoryMax));
        try {
          fs.writeFileSync(nodePath.join(dir, 'memory.swap.max'), '0');
        } catch {
          /* no swap accounting: memory.max alone */
        }
      }
      return { procsFile: nodePath.join(dir, 'cgroup.procs'), remove: () => removeLater(dir), oomKilled: () => oomKills(dir) > 0 };
    } catch {
      try {
        fs.rmdirSync(dir);
      } catch {
        /* never created */
      }
    }
  }
  return null;
}

function hasController(base: string, name: string): boolean {
  try {
    return fs.readFileSync(nodePath.join(base, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes(name);
  } catch {
    return false;
  }
}

function oomKills(dir: string): number {
  try {
    return Number(/^oom_kill (\d+)/m.exec(fs.readFileSync(nodePath.join(dir, 'memory.events'), 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

function usable(base: string): boolean {
  try {
    if (base.endsWith('/pids')) return fs.statSync(base).isDirectory();
    return fs.readFileSync(nodePath.join(base, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('pids');
  } catch {
    return false;
  }
}

/** A cgroup can only be removed once empty; the PID namespace teardown may lag the leader's exit by a moment. */
function removeLater(dir: string, attempt = 0): void {
  try {
    fs.rmdirSync(dir);
  } catch {
    if (attempt < 20) setTimeout(() => removeLater(dir, attempt + 1), 50 * (attempt + 1)).unref();
  }
}
