// How `acia mcp` starts a run job: in a child process of its own session (what the CLI does, so a run
// outlives a one-shot client and a signal stops it as Ctrl-C stops `acia run`), or in this process
// (the library default, where nothing can outlive the caller).
import { createInterface } from 'node:readline';
import type { ChildProcess } from 'node:child_process';
import { AciaError, errorMessage } from '../../core/errors.js';
import { spawnHostProcess } from '../../core/contain/host-process.js';
import type { RunResult } from '../../team/team.js';
import { JobMessage, jobError, runJob, type RunEvent, type RunJob } from './run-job.js';

export interface LaunchedRun {
  runId: string;
  /** Settles when the run stops (its terminal result), or rejects when its process failed without one. */
  done: Promise<RunResult>;
  /** Stops it at its next safe point, as Ctrl-C does: it ends `aborted`, resumable. */
  interrupt(): void;
  /** This server stops listening; a run in a child process goes on and finishes on its own. */
  detach(): void;
  /** Whether `detach` lets the run outlive this process. */
  readonly detachable: boolean;
}

export type Launcher = (job: RunJob, env: NodeJS.ProcessEnv, onEvent: (e: RunEvent) => void, warn: (line: string) => void) => Promise<LaunchedRun>;

/** The job in this process: interrupted through its AbortSignal; it ends with the process. */
export const inProcess: Launcher = async (job, env, onEvent, warn) => {
  const controller = new AbortController();
  let announce: (id: string) => void = () => undefined;
  const started = new Promise<string>((r) => (announce = r));
  const done = runJob(job, env, controller.signal, { onRunId: announce, onEvent, warn });
  const runId = await Promise.race([started, done.then((r) => r.runId)]);
  return { runId, done, interrupt: () => controller.abort(), detach: () => undefined, detachable: false };
};

/** The command line of `acia mcp run-job` (node, the CLI script, the subcommand). */
export interface JobCommand {
  command: string;
  args: string[];
}

/** Each job in a child process, started through the containment module in a session of its own. */
export function childLauncher(cmd: JobCommand): Launcher {
  return (job, env, onEvent, warn) => {
    const child = spawnHostProcess({ command: cmd.command, args: cmd.args, env, writable: [job.repo], what: 'acia mcp run-job' }, ['pipe', 'pipe', 'pipe'], { detached: true });
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(`${JSON.stringify(job)}\n`);
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4096);
    });
    return new Promise<LaunchedRun>((resolveStart, rejectStart) => {
      let settle: { resolve: (r: RunResult) => void; reject: (e: Error) => void } | null = null;
      const done = new Promise<RunResult>((resolve, reject) => (settle = { resolve, reject }));
      // Awaited by whoever waits on the run; a start failure is reported through rejectStart instead.
      done.catch(() => undefined);
      let runId: string | null = null;
      let ended = false;
      const lines = createInterface({ input: child.stdout! });
      lines.on('line', (line) => {
        let m: JobMessage;
        try {
          m = JobMessage.parse(JSON.parse(line));
        } catch {
          warn(`acia mcp run-job said something that is not a job message: ${line.slice(0, 200)}`);
          return;
        }
        switch (m.kind) {
          case 'started':
            runId = m.runId;
            resolveStart(handle(child, m.runId, done, lines));
            break;
          case 'event':
            onEvent(m.event);
            break;
          case 'warning':
            warn(m.text);
            break;
          case 'done':
            ended = true;
            settle!.resolve(m.result);
            if (runId === null) resolveStart(handle(child, m.result.runId, done, lines));
            break;
          case 'error':
            ended = true;
            settle!.reject(jobError(m));
            rejectStart(jobError(m));
            break;
        }
      });
      child.once('error', (e) => {
        const err = new AciaError('INTERNAL', `cannot start acia mcp run-job: ${errorMessage(e)}`);
        settle!.reject(err);
        rejectStart(err);
      });
      child.once('close', (code, signal) => {
        if (ended) return;
        const err = new AciaError('INTERNAL', `the run's process stopped (${signal ?? `exit ${code}`}) before it reported an end${stderr.trim() ? `: ${stderr.trim().split('\n').slice(-3).join(' | ')}` : ''}`);
        settle!.reject(err);
        rejectStart(err);
      });
    });
  };
}

function handle(child: ChildProcess, runId: string, done: Promise<RunResult>, lines: ReturnType<typeof createInterface>): LaunchedRun {
  return {
    runId,
    done,
    detachable: true,
    interrupt: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
    },
    detach: () => {
      // Nothing of the child keeps this process alive any more; it writes into closed pipes and ignores that.
      lines.close();
      child.stdout!.destroy();
      child.stderr!.destroy();
      child.unref();
    },
  };
}
