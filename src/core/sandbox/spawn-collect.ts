// Spawns a process (no shell), collects capped head+tail output, and kills its whole group on timeout or abort.
import { spawn } from 'node:child_process';
import type { CommandOutcome } from '../tools/types.js';
import { closeInheritedFds } from './close-fds.js';

export interface SpawnCollectOptions {
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
  outputCapBytes: number;
  /** Output past this many bytes kills the process (endless output); 32 caps, at least 64 MiB, by default. */
  killAfterBytes?: number;
  /** Called once the process is spawned (e.g. to place it in a cgroup). */
  onSpawn?: (pid: number) => void;
}

export const DEFAULT_OUTPUT_CAP = 1024 * 1024;

/** Runs argv[0] with argv[1..]; never rejects: spawn failures become exit code 127 with the reason as output. */
export function spawnCollect(argv: readonly string[], options: SpawnCollectOptions): Promise<CommandOutcome> {
  const opts = { ...options, killAfterBytes: options.killAfterBytes ?? Math.max(options.outputCapBytes * 32, 64 * 1024 * 1024) };
  const started = Date.now();
  const [file, ...args] = argv;
  return new Promise((resolve) => {
    const half = Math.max(1, Math.floor(opts.outputCapBytes / 2));
    const head: Buffer[] = [];
    let headBytes = 0;
    let tail: Buffer[] = [];
    let tailBytes = 0;
    let total = 0;
    let timedOut = false;
    let killedForOutput = false;
    let settled = false;

    // No descriptor ACIA's parent handed down may reach the command (it could write outside the worktree).
    closeInheritedFds();
    const child = spawn(file ?? 'false', args, {
      cwd: opts.cwd,
      env: opts.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // own process group, so the group can be killed as a whole
    });
    const killGroup = (): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        try {
          child.kill('SIGKILL');
        } catch {
          /* already gone */
        }
      }
    };
    const onData = (chunk: Buffer): void => {
      total += chunk.length;
      if (headBytes < half) {
        const take = chunk.subarray(0, half - headBytes);
        head.push(take);
        headBytes += take.length;
        chunk = chunk.subarray(take.length);
      }
      if (chunk.length > 0) {
        tail.push(chunk);
        tailBytes += chunk.length;
        while (tailBytes - (tail[0]?.length ?? 0) >= half && tail.length > 1) tailBytes -= (tail.shift() as Buffer).length;
        if (tail.length > 64) tail = [Buffer.concat(tail)];
      }
      if (total > opts.killAfterBytes && !killedForOutput) {
        killedForOutput = true;
        killGroup();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);

    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, opts.timeoutMs);
    const onAbort = (): void => killGroup();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (child.pid !== undefined) opts.onSpawn?.(child.pid);

    const finish = (exitCode: number | null, signal: string | null, spawnError?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      let tailBuf = Buffer.concat(tail);
      if (tailBuf.length > half) tailBuf = tailBuf.subarray(tailBuf.length - half);
      const headText = Buffer.concat(head).toString('utf8');
      const dropped = total - headBytes - tailBuf.length;
      let output = dropped > 0 ? `${headText}\n[... ${dropped} bytes of output dropped ...]\n${tailBuf.toString('utf8')}` : headText + tailBuf.toString('utf8');
      if (killedForOutput) output += `\n[killed: output exceeded ${opts.killAfterBytes} bytes]`;
      if (spawnError !== undefined) output += spawnError;
      resolve({ exitCode, signal, timedOut, output, truncated: dropped > 0, durationMs: Date.now() - started });
    };
    child.on('error', (err) => finish(127, null, `failed to start ${file ?? ''}: ${err.message}`));
    // Stragglers that outlive the leader would hold the pipes open: the group dies with the leader.
    child.on('exit', () => killGroup());
    child.on('close', (code, sig) => finish(code, sig));
  });
}
