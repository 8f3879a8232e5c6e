// Inherited file descriptors: an fd ACIA's own parent passed down without close-on-exec would reach every
// command ACIA starts (bubblewrap passes them through), and /proc/self/fd/N reopens its file from inside
// the sandbox whatever is mounted there. Node opens everything close-on-exec itself, so an fd >= 3 without
// the flag is not ACIA's: it is closed before a command starts. (Node has no fcntl to set the flag instead.)
import * as fs from 'node:fs';

const O_CLOEXEC = 0o2000000;

/** Closes every fd >= 3 of this process that would survive exec; returns the fds closed. Linux only. */
export function closeInheritedFds(): number[] {
  let fds: string[];
  try {
    fds = fs.readdirSync('/proc/self/fdinfo');
  } catch {
    return []; // no procfs: nothing to inspect
  }
  const keep = new Set([Number(process.env.NODE_CHANNEL_FD ?? -1)]);
  const closed: number[] = [];
  for (const name of fds) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd < 3 || keep.has(fd)) continue;
    let flags: number;
    try {
      const m = /^flags:\s*([0-7]+)/m.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
      if (!m?.[1]) continue;
      flags = parseInt(m[1], 8);
    } catch {
      continue; // closed meanwhile (the readdir's own fd, for one)
    }
    if ((flags & O_CLOEXEC) !== 0) continue;
    try {
      fs.closeSync(fd);
      closed.push(fd);
    } catch {
      /* already gone */
    }
  }
  return closed;
}
