// A real PostgreSQL server for a test suite: Debian's binaries, a fresh cluster in a temp dir on a free
// port, trust auth on 127.0.0.1 only; stopped (immediately) when the suite ends.
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestPostgres {
  url: string;
  stop(): void;
  /** Stops the server now and starts it again (a restart mid-run). */
  restart(): void;
  /** Starts it again after stop() (an outage of chosen length). */
  start(): void;
}

/** The newest installed server's bin dir, or null (then fleet suites skip with the reason). */
export function postgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl'))).sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : null;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export async function startPostgres(): Promise<TestPostgres> {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL server binaries are not installed (apt-get install postgresql)');
  const dir = mkdtempSync(join(tmpdir(), 'acia-pg-'));
  const data = join(dir, 'data');
  // The server refuses to run as root: as root, it runs as the postgres user Debian's package creates.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const run = (cmd: string, args: string[]) => {
    const argv = asRoot ? ['runuser', '-u', 'postgres', '--', join(bin, cmd), ...args] : [join(bin, cmd), ...args];
    const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', cwd: dir });
    if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr || r.stdout}`);
  };
  run('initdb', ['-D', data, '-U', 'acia', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  const start = () => run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start']);
  start();
  return {
    url: `postgres://acia@127.0.0.1:${port}/postgres`,
    stop: () => run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']),
    restart: () => {
      run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
      start();
    },
    start,
  };
}
