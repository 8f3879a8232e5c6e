// `acia mcp --http 0` started by a test: the URL it says it listens on, read from its stderr.
import type { ChildProcess } from 'node:child_process';

/** Resolves with `http://127.0.0.1:<port>/mcp` once the server prints it; rejects if it exits first. */
export function listeningUrl(server: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let err = '';
    server.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(err);
      if (m) resolve(m[1]!);
    });
    server.once('exit', () => reject(new Error(`acia mcp exited: ${err}`)));
  });
}
