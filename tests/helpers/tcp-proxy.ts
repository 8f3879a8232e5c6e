// A TCP proxy a test controls, to put a network partition between one process and a server (a worker
// and its PostgreSQL). `cut()` stops forwarding in both directions without closing anything, as a
// dropped link does: bytes sent meanwhile wait, queries hang. `restore()` forwards them again, so a
// write the process made during the partition arrives late, as after a real partition heals.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let isCut = false;
  const pairs = new Set<[Socket, Socket]>();
  const waiting: (() => void)[] = [];
  const server: Server = createServer((client) => {
    const open = () => {
      const upstream = connect(targetPort, targetHost);
      const pair: [Socket, Socket] = [client, upstream];
      pairs.add(pair);
      client.pipe(upstream);
      upstream.pipe(client);
      const drop = () => {
        pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      if (isCut) pauseBoth(pair);
    };
    client.pause();
    // A connection opened during the partition waits, like a SYN nobody answers.
    if (isCut) waiting.push(open);
    else open();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    cut: () => {
      isCut = true;
      for (const p of pairs) pauseBoth(p);
    },
    restore: () => {
      isCut = false;
      for (const [a, b] of pairs) {
        a.pipe(b);
        b.pipe(a);
      }
      for (const open of waiting.splice(0)) open();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const [a, b] of pairs) {
          a.destroy();
          b.destroy();
        }
        server.close(() => resolve());
      }),
  };
}

function pauseBoth([a, b]: [Socket, Socket]): void {
  // pipe() resumes a paused source when the destination drains: unpipe so nothing flows until restore.
  a.unpipe(b);
  b.unpipe(a);
  a.pause();
  b.pause();
}
