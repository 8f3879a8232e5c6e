// The TCP ports a process listens on, read from /proc (its socket inodes matched against the kernel's
// table of listening sockets): what another local user could find and connect to.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

/** The ports `pid` listens on (IPv4 and IPv6), sorted; empty when it has none or /proc is not readable. */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  let fds: string[] = [];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of ['tcp', 'tcp6']) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address is HEX_IP:HEX_PORT; state 0A is LISTEN; the inode is column 10.
      const [, local, , state] = cols;
      if (state !== '0A' || !local || !inodes.has(cols[9] ?? '')) continue;
      ports.add(parseInt(local.split(':')[1] ?? '0', 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}
