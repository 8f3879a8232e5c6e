// The one way ACIA starts a process outside the sandbox (an MCP server the user runs unsandboxed, an
// external ACP agent with the sandbox off, the bwrap and git launchers). An agent writes its worktree and a
// clone wrote the checkout, so neither may be where such a process looks for code: it starts in an empty
// private directory, and PATH, PYTHONPATH, NODE_PATH and the like lose every entry that is relative (it
// would resolve against that directory or wherever the process later moves) or inside a directory an agent
// or the repository can write. The worktree reaches the process only as an explicit argument or variable.
import { spawn, spawnSync, type ChildProcess, type StdioOptions } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { AciaError } from '../errors.js';
import { isWithin as inside } from '../sandbox/path-guard.js';
import { spawnCollect, type SpawnCollectOptions } from '../sandbox/spawn-collect.js';
import type { CommandOutcome } from '../tools/types.js';

/** Search paths a runtime loads code from: each entry is checked. */
const PATH_LISTS = [
  'PATH',
  'PYTHONPATH',
  'PYTHONHOME',
  'PYTHONUSERBASE',
  'PYTHONSTARTUP',
  'NODE_PATH',
  'PERL5LIB',
  'PERLLIB',
  'RUBYLIB',
  'GEM_HOME',
  'GEM_PATH',
  'CLASSPATH',
  'LD_LIBRARY_PATH',
  'LD_PRELOAD',
  'LD_AUDIT',
  'BASH_ENV',
  'ENV',
  'GOPATH',
] as const;
/** Option strings that can name code to load (`--require ./x`, `-r./x`): dropped when they name a path that fails the check. */
const OPTION_VARS = ['NODE_OPTIONS', 'RUBYOPT', 'PERL5OPT', 'JAVA_TOOL_OPTIONS'] as const;

/** PATH when every entry of the parent's was refused. */
const FALLBACK_PATH = '/usr/local/bin:/usr/bin:/bin';

export interface HostProcessOptions {
  /** argv[0]: a bare name (looked up on the checked PATH) or an absolute path outside `writable`. */
  command: string;
  args: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  /** Directories an agent or the repository can write: the checkout, the worktree(s). */
  writable: readonly string[];
  /** What the process is, for messages (`MCP server github`). */
  what: string;
}

export interface HostProcess {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** A fresh empty directory only this process uses; remove it with dispose() once the process is gone. */
  cwd: string;
  dispose(): void;
}

/**
 * The command, environment and working directory for a process started on the host. Refuses (CONFIG_INVALID)
 * a command given as a relative path or one inside a writable directory: either would run a file an agent
 * or the clone chose.
 */
export function hostProcess(o: HostProcessOptions): HostProcess {
  const writable = o.writable.map((w) => resolve(w));
  checkHostCommand(o.command, writable, o.what);
  const cwd = mkdtempSync(join(tmpdir(), 'acia-host-'));
  return {
    command: o.command,
    args: [...o.args],
    env: hostEnv(o.env, writable),
    cwd,
    dispose: () => rmSync(cwd, { recursive: true, force: true }),
  };
}

/**
 * Refuses (CONFIG_INVALID) a program to start on the host given as a relative path or as a file inside a
 * writable directory: either would run a file an agent or the clone chose. A bare name passes (PATH is checked).
 */
export function checkHostCommand(command: string, writable: readonly string[], what: string): void {
  if (!command.includes('/')) return;
  if (!isAbsolute(command)) {
    throw new AciaError('CONFIG_INVALID', `${what}: the command ${command} is a relative path; processes outside the sandbox start in an empty private directory`, {
      hint: 'give the absolute path of an installed program, or a name on your PATH; the worktree is passed as ACIA_WORKTREE',
    });
  }
  // By real path too: a link elsewhere that leads into the repository is the repository's file.
  const paths = [resolve(command), realOrNull(command)].filter((p): p is string => p !== null);
  if (writable.some((w) => paths.some((p) => inside(resolve(w), p) || inside(realOrNull(w) ?? resolve(w), p)))) {
    throw new AciaError('CONFIG_INVALID', `${what}: the command ${command} is a file an agent or the repository can write, and would run outside the sandbox`, {
      hint: 'install the program outside the repository, or let it run sandboxed',
    });
  }
}

/**
 * Starts a host process (see hostProcess) and removes its private directory when it exits. With `group`,
 * it leads a process group of its own, so `killGroup` ends it with everything it started (a shell's
 * children too); the group is also ended when ACIA exits. With `detached`, it leads its own session and
 * outlives ACIA: a Ctrl-C or hang-up aimed at ACIA's process group does not reach it (a run job of
 * `acia mcp` that must finish after a one-shot client left).
 */
export function spawnHostProcess(o: HostProcessOptions, stdio: StdioOptions, opts: { group?: boolean; detached?: boolean } = {}): ChildProcess {
  const p = hostProcess(o);
  let child: ChildProcess;
  try {
    child = spawn(p.command, p.args, { cwd: p.cwd, env: p.env, stdio, ...(opts.group || opts.detached ? { detached: true } : {}) });
  } catch (e) {
    p.dispose();
    throw e;
  }
  child.once('close', () => p.dispose());
  child.once('error', () => p.dispose());
  if (opts.group) {
    // Detached, it no longer gets the terminal's Ctrl-C with ACIA: ended here instead.
    const onExit = () => killGroup(child, 'SIGKILL');
    process.once('exit', onExit);
    child.once('close', () => process.removeListener('exit', onExit));
  }
  return child;
}

/** Signals the process group a `group` host process leads (or the process alone when it leads none). */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    // The group outlives its leader while the leader's children run (the kernel keeps the id taken until then).
    process.kill(-child.pid, signal);
  } catch {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  }
}

/**
 * Runs a short-lived host process (see hostProcess) to its end: stdin given, output capped, the whole process
 * group killed at the timeout or abort, and (with setpriv) when ACIA itself dies. Never rejects.
 */
export async function collectHostProcess(o: HostProcessOptions, run: Omit<SpawnCollectOptions, 'cwd' | 'env'>): Promise<CommandOutcome> {
  const p = hostProcess(o);
  const argv = hasSetpriv() ? ['setpriv', '--pdeathsig', 'KILL', '--', p.command, ...p.args] : [p.command, ...p.args];
  try {
    return await spawnCollect(argv, { ...run, cwd: p.cwd, env: p.env });
  } finally {
    p.dispose();
  }
}

/**
 * `env` with every search path checked: entries that are relative or inside a writable directory are
 * dropped (a variable left empty is removed), option strings naming such a path are removed whole.
 */
export function hostEnv(env: Readonly<Record<string, string | undefined>>, writable: readonly string[]): Record<string, string> {
  // By real path too, as checkHostCommand does: a directory reached through a link (~/code -> /data/code)
  // is still the repository's, whichever side of the comparison the link is on.
  const roots = writable.flatMap((w) => [resolve(w), realOrNull(w) ?? resolve(w)]);
  const bad = (p: string) => p === '' || !isAbsolute(p) || [resolve(p), realOrNull(p)].some((q) => q !== null && roots.some((w) => inside(w, q)));
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  for (const name of PATH_LISTS) {
    const v = out[name];
    if (v === undefined) continue;
    const kept = v.split(name === 'LD_PRELOAD' ? /[:\s]+/ : delimiter).filter((p) => !bad(p));
    if (kept.length > 0) out[name] = kept.join(name === 'LD_PRELOAD' ? ':' : delimiter);
    else delete out[name];
  }
  out.PATH ??= FALLBACK_PATH;
  for (const name of OPTION_VARS) {
    const v = out[name];
    if (v === undefined) continue;
    // A token that looks like a path (after an `=` or a short option's letter) must pass the same check.
    const paths = v.split(/\s+/).map((t) => t.replace(/^--?[A-Za-z-]+=?/, '')).filter((t) => t.includes('/') || t.startsWith('.'));
    if (paths.some(bad)) delete out[name];
  }
  // An inherited PWD names the caller's directory (often the checkout): the process finds its own.
  delete out.PWD;
  delete out.OLDPWD;
  return out;
}

/** One empty directory per process for short-lived trusted launchers (bwrap, git) that need some cwd. */
let launcherDir: string | null = null;
export function launcherCwd(): string {
  if (launcherDir === null) {
    const dir = mkdtempSync(join(tmpdir(), 'acia-cwd-'));
    launcherDir = dir;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return launcherDir;
}

let setprivFound: boolean | undefined;
/** Whether util-linux's setpriv is there (for `--pdeathsig`: a host process dies with ACIA). */
export function hasSetpriv(): boolean {
  setprivFound ??= spawnSync('setpriv', ['--version'], { stdio: 'ignore', cwd: launcherCwd() }).status === 0;
  return setprivFound;
}

function realOrNull(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
}
