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
  /** Written to stdin, which is then closed; stdin is /dev/null without it. */
  input?: string;
  /** Also keep stdout and stderr apart (each capped like the combined output): a hook's answer and its reason. */
  separate?: boolean;
}

export const DEFAULT_OUTPUT_CAP = 1024 * 1024;

/** Runs argv[0] with argv[1..]; never rejects: spawn failures become exit code 127 with the reason as output. */
export function spawnCollect(argv: readonly string[], options: SpawnCollectOptions): Promise<CommandOutcome> {
  const opts = { ...options, killAfterBytes: options.killAfterBytes ?? Math.max(options.outputCapBytes * 32, 64 * 1024 * 1024) };
  const started = Date.now();
  const [file, ...args] = argv;
  return new Promise((resolve) => {
    const all = new HeadTail(opts.outputCapBytes);
    const streams = opts.separate ? { stdout: new HeadTail(opts.outputCapBytes), stderr: new HeadTail(opts.outputCapBytes) } : null;
    let timedOut = false;
    let killedForOutput = false;
    let settled = false;

    // No descriptor ACIA's parent handed down may reach the command (it could write outside the worktree).
    closeInheritedFds();
    const child = spawn(file ?? 'false', args, {
      cwd: opts.cwd,
      env: opts.env,
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
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
    const onData =
      (own: HeadTail | undefined) =>
      (chunk: Buffer): void => {
        all.push(chunk);
        own?.push(chunk);
        if (all.total > opts.killAfterBytes && !killedForOutput) {
          killedForOutput = true;
          killGroup();
        }
      };
    child.stdout!.on('data', onData(streams?.stdout)); // piped above
    child.stderr!.on('data', onData(streams?.stderr));
    if (opts.input !== undefined && child.stdin) {
      // A command that exits without reading its input must not crash ACIA with EPIPE.
      child.stdin.on('error', () => undefined);
      child.stdin.end(opts.input);
    }

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
      let output = all.text();
      if (killedForOutput) output += `\n[killed: output exceeded ${opts.killAfterBytes} bytes]`;
      if (spawnError !== undefined) output += spawnError;
      const apart = streams ? { stdout: streams.stdout.text(), stderr: streams.stderr.text() + (spawnError ?? '') } : {};
      resolve({ exitCode, signal, timedOut, output, truncated: all.dropped() > 0, durationMs: Date.now() - started, ...apart });
    };
    child.on('error', (err) => finish(127, null, `failed to start ${file ?? ''}: ${err.message}`));
    // Stragglers that outlive the leader would hold the pipes open: the group dies with the leader.
    child.on('exit', () => killGroup());
    child.on('close', (code, sig) => finish(code, sig));
  });
}

/** Output kept within a cap: the first half and the last half of the bytes, with a note of what was dropped. */
class HeadTail {
  private readonly half: number;
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  total = 0;

  constructor(capBytes: number) {
    this.half = Math.max(1, Math.floor(capBytes / 2));
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.headBytes < this.half) {
      const take = chunk.subarray(0, this.half - this.headBytes);
      this.head.push(take);
      this.headBytes += take.length;
      chunk = chunk.subarray(take.length);
    }
    if (chunk.length > 0) {
      this.tail.push(chunk);
      this.tailBytes += chunk.length;
      while (this.tailBytes - (this.tail[0]?.length ?? 0) >= this.half && this.tail.length > 1) this.tailBytes -= (this.tail.shift() as Buffer).length;
      if (this.tail.length > 64) this.tail = [Buffer.concat(this.tail)];
    }
  }

  private tailBuf(): Buffer {
    const t = Buffer.concat(this.tail);
    return t.length > this.half ? t.subarray(t.length - this.half) : t;
  }

  dropped(): number {
    return this.total - this.headBytes - this.tailBuf().length;
  }

  text(): string {
    const headText = Buffer.concat(this.head).toString('utf8');
    const tail = this.tailBuf();
    const dropped = this.total - this.headBytes - tail.length;
    return dropped > 0 ? `${headText}\n[... ${dropped} bytes of output dropped ...]\n${tail.toString('utf8')}` : headText + tail.toString('utf8');
  }
}

export interface SpawnCaptureOptions {
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  /** Written to stdin, which is closed after it; stdin is /dev/null without it. */
  input?: string | Uint8Array;
  /** How stdout is decoded: 'latin1' keeps every byte as one char (file names that are not UTF-8). */
  encoding?: 'utf8' | 'latin1';
  signal?: AbortSignal;
}

export interface CapturedOutput {
  /** null when the process was killed (timeout, abort) or never started. */
  exitCode: number | null;
  stdout: string;
  /** stdout as bytes, for output that carries byte counts (`git cat-file --batch`). */
  stdoutBytes: Buffer;
  stderr: string;
  timedOut: boolean;
}

/**
 * Runs argv[0] with argv[1..] (no shell) and keeps stdout and stderr apart and whole, for ACIA's own
 * plumbing (git) whose output it parses; agent commands go through spawnCollect and its caps. Same
 * process-group kill on timeout or abort; never rejects.
 */
export function spawnCapture(argv: readonly string[], opts: SpawnCaptureOptions): Promise<CapturedOutput> {
  const [file, ...args] = argv;
  return new Promise((resolve) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    let settled = false;
    const child = spawn(file ?? 'false', args, {
      cwd: opts.cwd,
      env: opts.env,
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      detached: true,
    });
    const killGroup = (): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    };
    child.stdout?.on('data', (b: Buffer) => out.push(b));
    child.stderr?.on('data', (b: Buffer) => err.push(b));
    if (opts.input !== undefined && child.stdin) {
      // A process that exits without reading its input must not crash us with EPIPE.
      child.stdin.on('error', () => undefined);
      child.stdin.end(opts.input);
    }
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, opts.timeoutMs);
    const onAbort = (): void => killGroup();
    if (opts.signal?.aborted) killGroup();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (exitCode: number | null, extra = ''): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      const bytes = Buffer.concat(out);
      resolve({ exitCode, stdout: bytes.toString(opts.encoding ?? 'utf8'), stdoutBytes: bytes, stderr: Buffer.concat(err).toString('utf8') + extra, timedOut });
    };
    child.on('error', (e) => finish(null, `failed to start ${file ?? ''}: ${e.message}`));
    child.on('close', (code) => finish(code));
  });
}
