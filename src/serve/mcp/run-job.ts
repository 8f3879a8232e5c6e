// One run that `acia mcp` starts or resumes, as a job: the same library calls in this process, or in a
// child process (`acia mcp run-job`) that reads the job on stdin and reports on stdout as JSON lines.
// A child outlives a one-shot client (a started run finishes), and SIGINT stops it as Ctrl-C stops
// `acia run`: the run ends `aborted`, resumable, and the process exits 130.
import { z } from 'zod';
import type { LedgerEntry } from '../../core/ledger/entry.js';
import { systemClock } from '../../core/acm/ids.js';
import { loadConfig } from '../../core/config/load.js';
import { AciaError, errorMessage, isAciaError, type ErrorCode } from '../../core/errors.js';
import { noHuman } from '../../team/deps.js';
import { Git, requireCommit } from '../../team/git.js';
import { resumeRun, startRun, type RunResult } from '../../team/team.js';
import { preflightModel } from '../../app/build-deps.js';
import { createDeps } from '../../app/create-deps.js';
import { resumableSettings } from '../../app/prepare-run.js';
import { describeEntry } from '../../app/describe.js';
import { EXIT } from '../../app/exit-codes.js';

export const RunJob = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('start'), repo: z.string(), goal: z.string(), includeUncommitted: z.boolean(), flags: z.record(z.string(), z.unknown()) }),
  z.object({ kind: z.literal('resume'), repo: z.string(), runId: z.string(), answer: z.string().optional(), flags: z.record(z.string(), z.unknown()) }),
]);
export type RunJob = z.infer<typeof RunJob>;

/** One line per ledger entry, for progress notifications. */
export interface RunEvent {
  runId: string;
  seq: number;
  actor: string;
  type: string;
  text: string;
}

export interface JobHandlers {
  onRunId: (runId: string) => void;
  onEvent: (e: RunEvent) => void;
  warn: (line: string) => void;
}

/** Runs the job here, through the library API (what `acia run` and `acia resume` use too). */
export async function runJob(job: RunJob, env: NodeJS.ProcessEnv, signal: AbortSignal, h: JobHandlers): Promise<RunResult> {
  await requireCommit(new Git(systemClock), job.repo);
  // A resumed run goes on with the settings it recorded (never its sandbox), as `acia resume` does; the job's flags win.
  const recorded = job.kind === 'resume' ? await resumableSettings(env, job.repo, job.runId) : null;
  const { config } = loadConfig({ repo: job.repo, env, flags: job.flags, recorded });
  if (job.kind === 'start') preflightModel(config, env, false, job.repo);
  let announced = job.kind === 'resume';
  if (job.kind === 'resume') h.onRunId(job.runId);
  const deps = await createDeps({
    kind: 'local',
    repo: job.repo,
    config,
    env,
    escalator: noHuman,
    signal,
    warn: h.warn,
    onEvent: (ev) => {
      if (ev.kind !== 'entry') return;
      const e: LedgerEntry = ev.entry;
      if (!announced) {
        announced = true;
        h.onRunId(e.runId);
      }
      h.onEvent({ runId: e.runId, seq: e.seq, actor: e.actor, type: e.type, text: describeEntry(e) });
    },
  });
  if (job.kind === 'start') return startRun(deps, { dir: job.repo, goal: job.goal, includeUncommitted: job.includeUncommitted });
  return resumeRun(deps, { dir: job.repo, runId: job.runId, ...(job.answer === undefined ? {} : { answer: job.answer }) });
}

/** What a run-job child writes on stdout, one JSON object a line. */
export const JobMessage = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('started'), runId: z.string() }),
  z.object({ kind: z.literal('event'), event: z.object({ runId: z.string(), seq: z.number(), actor: z.string(), type: z.string(), text: z.string() }) }),
  z.object({ kind: z.literal('warning'), text: z.string() }),
  z.object({ kind: z.literal('done'), result: z.custom<RunResult>((v) => typeof v === 'object' && v !== null && typeof (v as { runId?: unknown }).runId === 'string') }),
  z.object({ kind: z.literal('error'), code: z.string(), message: z.string(), hint: z.string().optional() }),
]);
export type JobMessage = z.infer<typeof JobMessage>;

/** `acia mcp run-job`: the child side. Its stdout may be gone (the server left): the run goes on regardless. */
export async function runJobMain(stdin: NodeJS.ReadableStream = process.stdin): Promise<number> {
  // The CLI ends a process whose reader went away (`acia runs | head`); a job goes on without its server.
  for (const stream of [process.stdout, process.stderr]) {
    stream.removeAllListeners('error');
    stream.on('error', () => undefined);
  }
  const send = (m: JobMessage) => {
    if (process.stdout.writable) process.stdout.write(`${JSON.stringify(m)}\n`);
  };
  const controller = new AbortController();
  let interrupts = 0;
  const stop = () => {
    // Once: stop at the next safe point and record it; twice: now.
    if (++interrupts > 1) process.exit(EXIT.INTERRUPTED);
    controller.abort();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  // The session it runs in has no terminal; a hang-up of the server's is not its concern.
  process.on('SIGHUP', () => undefined);
  try {
    const job = RunJob.parse(JSON.parse(await firstLine(stdin)));
    const result = await runJob(job, process.env, controller.signal, {
      onRunId: (runId) => send({ kind: 'started', runId }),
      onEvent: (event) => send({ kind: 'event', event }),
      warn: (text) => send({ kind: 'warning', text }),
    });
    send({ kind: 'done', result });
    return result.reason === 'aborted' ? EXIT.INTERRUPTED : EXIT.OK;
  } catch (e) {
    const err = isAciaError(e) ? e : new AciaError('INTERNAL', errorMessage(e));
    send({ kind: 'error', code: err.code, message: err.message, ...(err.hint ? { hint: err.hint } : {}) });
    return EXIT.FAILED;
  }
}

function firstLine(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d: Buffer | string) => {
      buf += d.toString();
      const nl = buf.indexOf('\n');
      if (nl === -1) return;
      stream.off('data', onData);
      stream.pause();
      resolve(buf.slice(0, nl));
    };
    stream.on('data', onData);
    stream.once('end', () => reject(new AciaError('USAGE', 'acia mcp run-job reads one job (JSON) on stdin; it got none')));
  });
}

/** An AciaError as the child reported it, so the server's tool error is the one the run raised. */
export function jobError(m: Extract<JobMessage, { kind: 'error' }>): AciaError {
  return new AciaError(m.code as ErrorCode, m.message, m.hint === undefined ? {} : { hint: m.hint });
}
