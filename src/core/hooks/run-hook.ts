// Runs one hook command: `sh -c` in the worktree through the run's own command runner (the sandbox: the
// worktree writable, network per allowedHosts), or, for a user hook that opts out, as a host process
// through core/contain. The JSON document goes to stdin; stdout and stderr come back apart.
import { existsSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { checkHostCommand, collectHostProcess } from '../contain/host-process.js';
import { errorMessage } from '../errors.js';
import type { CommandOutcome, CommandRunner } from '../tools/types.js';
import { isWithin } from '../sandbox/path-guard.js';
import { shellQuote } from '../text/shell-quote.js';
import type { ResolvedHook } from './config.js';
import { interpretHook, type HookExec, type HookVerdict } from './decision.js';
import { hookInput, type HookOccurrence } from './occurrence.js';

/** Output kept per stream: an answer or a reason, not a build log. */
const HOOK_OUTPUT_CAP = 256 * 1024;

export interface HookRunOptions {
  /** The run's command runner for `cwd` (bubblewrap; the host runner only under `--sandbox off`). */
  runner: CommandRunner;
  /** The worktree the hook runs in. */
  cwd: string;
  /** Directories an agent or the repository can write: a hook outside the sandbox never runs code from them. */
  writable: readonly string[];
  /** The user's environment: what a hook outside the sandbox gets (its tokens included, the user's choice). */
  parentEnv: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal?: AbortSignal;
  /** ACIA's variables for the hook (event, name, run, task, worktree). */
  vars: Record<string, string>;
}

/** One hook at one occurrence, as a run does it: the document built, the command run, its answer read. */
export interface HookRun {
  /** The JSON text the hook read on stdin. */
  input: string;
  exec: HookExec;
  verdict: HookVerdict;
}

export async function runHook(hook: ResolvedHook, o: HookOccurrence, options: Omit<HookRunOptions, 'cwd' | 'timeoutMs' | 'vars'> & { timeoutMs?: number }): Promise<HookRun> {
  // A sandboxed hook sees the worktree where the sandbox shows it (at the checkout's own path): its paths are those.
  const inside = hook.sandbox && options.runner.pathInside ? options.runner.pathInside.bind(options.runner) : (p: string) => p;
  const seen: HookOccurrence = { ...o, cwd: inside(o.cwd), task: o.task && { ...o.task, worktree: o.task.worktree === null ? null : inside(o.task.worktree) } };
  const input = JSON.stringify(hookInput(hook, seen));
  const timeoutMs = Math.max(1, Math.min(hook.timeoutMs, options.timeoutMs ?? hook.timeoutMs));
  const vars = { ACIA_HOOK_EVENT: o.event, ACIA_HOOK_NAME: hook.id, ACIA_RUN_ID: o.run.id, ...(o.task ? { ACIA_TASK_ID: o.task.id } : {}), ACIA_WORKTREE: seen.cwd, CLAUDE_PROJECT_DIR: seen.cwd };
  const exec = await execHook(hook, input, { ...options, cwd: o.cwd, timeoutMs, vars });
  return { input, exec, verdict: interpretHook(hook.id, exec, timeoutMs) };
}

export async function execHook(hook: ResolvedHook, input: string, o: HookRunOptions): Promise<HookExec> {
  const vars = { ACIA_WORKTREE: o.cwd, CLAUDE_PROJECT_DIR: o.cwd, ...o.vars };
  const script = hook.fromUser ? userScript(hook.command, o.parentEnv, o.cwd) : null;
  // The script a hook outside the sandbox names first is held to the rule of every host process: never a
  // file in the checkout or a worktree (the clone's or an agent's to change): a denial that says so.
  if (!hook.sandbox) {
    const first = scriptPath(hook.command, o.parentEnv);
    try {
      if (first !== null) checkHostCommand(first, o.writable, `hook ${hook.id}`);
    } catch (e) {
      return { exitCode: null, signal: null, timedOut: false, stdout: '', stderr: '', durationMs: 0, startError: errorMessage(e) };
    }
  }
  const command = script === null ? hook.command : `${shellQuote(script.path)}${hook.command.slice(script.word.length)}`;
  const run = { timeoutMs: o.timeoutMs, outputCapBytes: HOOK_OUTPUT_CAP, input, separate: true as const, ...(o.signal ? { signal: o.signal } : {}) };
  let out: CommandOutcome;
  if (hook.sandbox) {
    out = await o.runner.run(command, { ...run, cwd: o.cwd, env: vars, ...(script ? { readOnlyPaths: [script.path] } : {}) });
  } else {
    // Outside the sandbox: an empty private directory, checked search paths; the worktree is ACIA_WORKTREE.
    out = await collectHostProcess({ command: '/bin/sh', args: ['-c', command], env: { ...o.parentEnv, ...vars }, writable: o.writable, what: `hook ${hook.id}` }, run);
  }
  const stderr = out.stderr ?? out.output;
  const notStarted = out.exitCode === 127 && /^failed to start /m.test(stderr);
  return {
    exitCode: out.exitCode,
    signal: out.signal,
    timedOut: out.timedOut,
    stdout: out.stdout ?? '',
    stderr,
    durationMs: out.durationMs,
    ...(notStarted ? { startError: stderr.trim() } : {}),
  };
}

/**
 * A user hook's script named by its first word (`/abs/path` or `~/...`), when it is a file outside the
 * worktree: the sandbox masks homes, so that one file is let in, read-only, at its absolute path. A script
 * inside the worktree is the agent's to change, and a repository's hook gets no such door.
 */
function userScript(command: string, env: NodeJS.ProcessEnv, cwd: string): { word: string; path: string } | null {
  const word = firstWord(command);
  const path = scriptPath(command, env);
  if (word === undefined || path === null || !isAbsolute(path) || isWithin(cwd, path) || !existsSync(path) || !statSync(path).isFile()) return null;
  return { word, path };
}

/** The command's first word when it names a file by path (`/abs/x`, `~/x`, `./x`), `~` expanded. */
function scriptPath(command: string, env: NodeJS.ProcessEnv): string | null {
  const word = firstWord(command);
  if (word === undefined || !word.includes('/')) return null;
  if (!word.startsWith('~/')) return word;
  const home = env.HOME;
  return home !== undefined && isAbsolute(home) ? join(home, word.slice(2)) : null;
}

function firstWord(command: string): string | undefined {
  return /^[^\s'"`$;&|<>()\\]+/.exec(command)?.[0];
}
