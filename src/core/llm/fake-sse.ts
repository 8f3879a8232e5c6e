// Server side of SSE for the fake model server: paced event writes and a mid-stream connection cut.
import type { ServerResponse } from 'node:http';

export class SseWriter {
  private readonly res: ServerResponse;
  private readonly delayMs: number;

  constructor(res: ServerResponse, delayMs: number) {
    this.res = res;
    this.delayMs = delayMs;
  }

  /** Writes `event:` + `data:`; a null name writes a bare data line (OpenAI style). */
  async event(name: string | null, data: unknown): Promise<void> {
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
    const payload = typeof data === 'string' ? data : JSON.stringify(data);
    this.res.write(`${name === null ? '' : `event: ${name}\n`}data: ${payload}\n\n`);
  }

  /** Ends the TCP connection without a clean end of stream, once what was written has flushed. */
  cut(): Promise<void> {
    return new Promise((resolve) => {
      this.res.write('', () => {
        this.res.socket?.destroy();
        resolve();
      });
    });
  }
}
