// A Server-Sent Events response: named events with JSON data, an id for the browser to resume from
// after a dropped connection (Last-Event-ID), and a comment every few seconds so idle proxies and the
// browser keep the stream open.
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface Sse {
  event(name: string, data: unknown, id?: string): void;
  onClose(fn: () => void): void;
}

const HEARTBEAT_MS = 15_000;

export function openSse(req: IncomingMessage, res: ServerResponse, open: Set<ServerResponse>): Sse {
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
  res.write('retry: 2000\n\n');
  open.add(res);
  const closers: (() => void)[] = [];
  const heartbeat = setInterval(() => res.write(': ping\n\n'), HEARTBEAT_MS);
  heartbeat.unref();
  const closed = (): void => {
    clearInterval(heartbeat);
    open.delete(res);
    for (const fn of closers.splice(0)) fn();
  };
  req.on('close', closed);
  return {
    event(name, data, id) {
      // JSON has no raw newlines, so one `data:` line carries it whole.
      res.write(`${id === undefined ? '' : `id: ${id}\n`}event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    onClose(fn) {
      if (res.writableEnded || req.destroyed) fn();
      else closers.push(fn);
    },
  };
}
