// How ACIA itself runs git in a worktree an agent wrote to: nothing the agent wrote may run code out here.
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { AciaError } from '../errors.js';
import { isSecretName } from './env.js';
import { spawnCapture } from './spawn-collect.js';
import { launcherCwd } from '../contain/host-process.js';

/**
 * Config forced on every call. Hooks, fsmonitor, external diff/textconv, filters and pagers are all ways a
 * file in the worktree (or a config an agent managed to plant) could name a program for git to run.
 */
export const SAFE_GIT_CONFIG: readonly string[] = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.untrackedCache=false',
  'core.pager=cat',
  'core.editor=true',
  'core.askPass=',
  'core.sshCommand=false',
  'credential.helper=',
  'diff.external=',
  'gpg.program=false',
  'commit.gpgSign=false',
  'tag.gpgSign=false',
  'protocol.allow=never',
  'protocol.file.allow=never',
  'submodule.recurse=false',
  // A nested repository (a gitlink path the agent filled, or any directory with its own .git) is never
  // entered: git would run `git status` inside it, under that repository's own config and drivers.
  'diff.ignoreSubmodules=all',
  'status.submoduleSummary=false',
  'fetch.recurseSubmodules=false',
  'core.attributesFile=/dev/null',
  'uploadpack.packObjectsHook=',
  'safe.directory=*',
  // Signature checks run a configured program on signed commits; background maintenance is not ours to start.
  'gpg.ssh.program=false',
  'gpg.x509.program=false',
  'log.showSignature=false',
  'merge.verifySignatures=false',
  'gc.auto=0',
  'maintenance.auto=false',
];

export interface SafeGitOptions {
  /** The git dir the worktree's `.git` must point to; checked before every call when given. */
  expectedGitDir?: string;
  timeoutMs?: number;
  input?: string | Uint8Array;
  /** 'latin1' keeps every byte of a file name as one char (git prints names as raw bytes with -z). */
  encoding?: 'utf8' | 'latin1';
  /** Extra env (still scrubbed of secrets). */
  env?: Record<string, string>;
  signal?: AbortSignal;
  /** Called (and awaited) before a call that met a half-added worktree runs again (tests use it). */
  beforeRetry?: (stderr: string) => void | Promise<void>;
}

export interface SafeGitResult {
  exitCode: number;
  stdout: string;
  stdoutBytes: Buffer;
  stderr: string;
}

/**
 * Subcommands that only name refs and objects: they never read a work tree file through a filter, diff
 * or merge, so the driver query (a process of its own when its answer is not cached) is not needed.
 */
const NO_CONTENT_COMMANDS: ReadonlySet<string> = new Set(['rev-parse', 'symbolic-ref', 'for-each-ref', 'update-ref']);

/**
 * `ls-files` that lists the index alone (no -m, -o, -d, -k or -t, which compare or look at the work
 * tree) reads no file content either.
 */
const INDEX_ONLY_LS_FILES: ReadonlySet<string> = new Set(['-z', '-s', '--stage', '-c', '--cached', '--full-name']);

export function readsNoContent(args: readonly string[]): boolean {
  const [sub, ...rest] = args;
  if (NO_CONTENT_COMMANDS.has(sub ?? '')) return true;
  if (sub !== 'ls-files') return false;
  const end = rest.indexOf('--');
  return end >= 0 && rest.slice(0, end).every((a) => INDEX_ONLY_LS_FILES.has(a));
}

/** Runs `git <args>` in `cwd` with hardened config and env. Diff-like commands get --no-ext-diff --no-textconv. */
export async function safeGit(cwd: string, args: readonly string[], opts: SafeGitOptions = {}): Promise<SafeGitResult> {
  if (opts.expectedGitDir !== undefined) assertGitPointer(cwd, opts.expectedGitDir);
  const config = SAFE_GIT_CONFIG.flatMap((c) => ['-c', c]);
  const drivers = readsNoContent(args) ? [] : await driverOverrides(cwd);
  const full = ['--no-pager', ...config, ...drivers, ...hardenSubcommand(args)];
  for (let attempt = 0; ; attempt++) {
    // git goes to the worktree with -C; the process itself starts in an empty directory (core/contain).
    const result = await spawnCapture(['git', '-C', nodePath.resolve(cwd), ...full], {
      cwd: launcherCwd(),
      env: gitEnv(opts.env),
      timeoutMs: opts.timeoutMs ?? 60_000,
      ...(opts.encoding ? { encoding: opts.encoding } : {}),
      ...(opts.input !== undefined ? { input: opts.input } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const out = { exitCode: result.exitCode ?? 1, stdout: result.stdout, stdoutBytes: result.stdoutBytes, stderr: result.stderr };
    if (out.exitCode === 0 || attempt >= HALF_ADDED_RETRIES.length || !HALF_ADDED_WORKTREE.test(out.stderr) || opts.signal?.aborted) return out;
    await opts.beforeRetry?.(out.stderr);
    await sleep(HALF_ADDED_RETRIES[attempt]! * (0.5 + Math.random()));
  }
}

/**
 * git dies when, listing the repository's worktrees, it meets one that another `git worktree add` has
 * half made: its `commondir` file exists and is still empty ("failed to read .git/worktrees/t3/commondir:
 * Success"). `worktree add` lists them before it changes anything, and so does `branch -f`, so parallel
 * tasks (or two runs in one repository) adding worktrees at once made one of them fail now and then (one
 * add in a few hundred on this machine; a parallel run then stopped with an internal error). The sibling
 * finishes in milliseconds: the call runs again, a few times, after a short jittered wait.
 */
const HALF_ADDED_WORKTREE = /failed to read .*[/\\]worktrees[/\\][^/\\\n]+[/\\]commondir/;
const HALF_ADDED_RETRIES = [10, 25, 50, 100, 200, 400];

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/** Guards against a replaced `.git` file sending git to a directory (and config) the agent controls. */
export function assertGitPointer(cwd: string, expectedGitDir: string): void {
  const dotGit = nodePath.join(cwd, '.git');
  let actual: string;
  try {
    const st = fs.lstatSync(dotGit);
    if (st.isDirectory()) actual = fs.realpathSync(dotGit);
    else if (st.isFile()) {
      const m = /^gitdir:\s*(.+?)\s*$/m.exec(fs.readFileSync(dotGit, 'utf8'));
      actual = m?.[1] ? fs.realpathSync(nodePath.resolve(cwd, m[1])) : '';
    } else actual = '';
  } catch {
    actual = '';
  }
  if (actual !== fs.realpathSync(expectedGitDir)) {
    throw new AciaError('NOT_A_GIT_REPO', `refusing to run git in ${cwd}: its .git no longer points to ${expectedGitDir}`);
  }
}

function hardenSubcommand(args: readonly string[]): string[] {
  const [sub, ...rest] = args;
  if (sub === undefined) return [];
  if (['diff', 'log', 'show', 'format-patch'].includes(sub)) return [sub, '--no-ext-diff', '--no-textconv', '--ignore-submodules=all', ...rest];
  if (sub === 'status') return [sub, '--ignore-submodules=all', ...rest];
  return [sub, ...rest];
}

/**
 * Every filter, diff and merge driver the repository's config defines (whatever file names it: a
 * subdirectory .gitattributes, info/attributes, an include) is overridden to run nothing. Names come from
 * the config itself, not from attribute files, so no place an attribute can hide in is missed.
 *
 * Asking git costs a process per call, which doubled every git call ACIA made. The answer is kept for as
 * long as the config files git reads there are unchanged (same inode, size, mtime and ctime, to the
 * nanosecond), and shared by the worktrees that read the same files; a config with an include is asked
 * every time, since the included files are not watched. A config changed between this check and the call
 * is the same race the query always had.
 */
export async function driverOverrides(cwd: string): Promise<string[]> {
  const signature = configSignature(cwd);
  const cached = signature === null ? undefined : overrideCache.get(signature);
  if (cached !== undefined) return cached;
  // A config with includes is asked every time, each caller for itself: the included files are not watched.
  if (signature === null || withIncludes.has(signature)) return queryDrivers(cwd, null);
  // Callers that ask at the same moment (the CLI asks ahead, while git finds the repository) share one query.
  let pending = inFlight.get(signature);
  if (pending === undefined) {
    pending = queryDrivers(cwd, signature).finally(() => inFlight.delete(signature));
    inFlight.set(signature, pending);
  }
  return pending;
}

const inFlight = new Map<string, Promise<string[]>>();
/** Signatures whose config was found to include other files. */
const withIncludes = new Set<string>();

async function queryDrivers(cwd: string, signature: string | null): Promise<string[]> {
  const r = await spawnCapture(['git', '-C', nodePath.resolve(cwd), 'config', '--includes', '-z', '--name-only', '--get-regexp', '^(filter|diff|merge)\\.|^include(if)?\\.'], {
    cwd: launcherCwd(),
    env: gitEnv(),
    timeoutMs: 10_000,
  });
  const names = { filter: new Set<string>(), diff: new Set<string>(), merge: new Set<string>() };
  let includes = false;
  for (const key of String(r.stdout).split('\0')) {
    const first = key.indexOf('.');
    const last = key.lastIndexOf('.');
    const kind = key.slice(0, Math.max(first, 0)).toLowerCase();
    if (kind === 'include' || kind === 'includeif') includes = true;
    if (first < 0 || last <= first) continue; // section.key without a driver name (e.g. diff.external)
    if (kind === 'filter' || kind === 'diff' || kind === 'merge') names[kind].add(key.slice(first + 1, last));
  }
  const out: string[] = [];
  const set = (k: string) => out.push('-c', k);
  for (const n of names.filter) [`filter.${n}.clean=`, `filter.${n}.smudge=`, `filter.${n}.process=`, `filter.${n}.required=false`].forEach(set);
  for (const n of names.diff) [`diff.${n}.command=`, `diff.${n}.textconv=`].forEach(set);
  // `false` rather than empty: the merge then reports a conflict ACIA handles, instead of a hard failure.
  for (const n of names.merge) set(`merge.${n}.driver=false`);
  // Cached only when git answered and the signature did not move while it did.
  if (signature !== null && includes) {
    if (withIncludes.size >= 256) withIncludes.clear();
    withIncludes.add(signature);
  }
  if (signature !== null && !includes && r.exitCode !== null && r.exitCode <= 1 && configSignature(cwd) === signature) {
    if (overrideCache.size >= 256) overrideCache.clear(); // signatures of configs long since changed
    overrideCache.set(signature, out);
  }
  return out;
}

/** Keyed by the config files' identity, so every worktree of a repository shares one answer. */
const overrideCache = new Map<string, string[]>();

/**
 * Identity of the config files git reads in `cwd` (system and global config are off): the repository's
 * `config` in its common dir and `config.worktree` in the worktree's git dir (an absent file counts as
 * absent). Null when `cwd` is not the top of a work tree with a `.git` ACIA can read (git would search
 * parent directories): not cached then.
 */
function configSignature(cwd: string): string | null {
  try {
    const dotGit = nodePath.join(cwd, '.git');
    const st = fs.lstatSync(dotGit);
    let gitDir: string;
    if (st.isDirectory()) gitDir = dotGit;
    else if (st.isFile()) {
      const m = /^gitdir:\s*(.+?)\s*$/m.exec(fs.readFileSync(dotGit, 'utf8'));
      if (!m?.[1]) return null;
      gitDir = nodePath.resolve(cwd, m[1]);
    } else return null;
    let commonDir = gitDir;
    try {
      commonDir = nodePath.resolve(gitDir, fs.readFileSync(nodePath.join(gitDir, 'commondir'), 'utf8').trim());
    } catch {
      // No commondir file: the git dir is the common dir.
    }
    // Not the git dirs themselves: their mtimes move with every index and ref write. Not the `.git` file:
    // where it points is in the paths above.
    const files = [nodePath.join(commonDir, 'config'), nodePath.join(gitDir, 'config.worktree'), nodePath.join(commonDir, 'config.worktree')];
    return [fs.realpathSync(commonDir), ...files.map(fileIdentity)].join('|');
  } catch {
    return null;
  }
}

function fileIdentity(file: string): string {
  try {
    const s = fs.lstatSync(file, { bigint: true });
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}:${s.mode}`;
  } catch {
    return '-';
  }
}

/** The scrubbed environment every host git call gets: no system or global config, no prompts, no pager. */
export function gitEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    LANG: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_PAGER: 'cat',
    GIT_EDITOR: 'true',
    GIT_ASKPASS: 'true',
    GIT_NO_REPLACE_OBJECTS: '1',
  };
  for (const [k, v] of Object.entries(extra)) if (!isSecretName(k) || k.startsWith('GIT_')) env[k] = v;
  return env;
}
