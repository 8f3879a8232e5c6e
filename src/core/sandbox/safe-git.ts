// How ACIA itself runs git in a worktree an agent wrote to: nothing the agent wrote may run code out here.
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { AciaError } from '../errors.js';
import { isSecretName } from './env.js';
import { spawnCapture } from './spawn-collect.js';

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
  'uploadpack.packObjectsHook=',
  'safe.directory=*',
];

export interface SafeGitOptions {
  /** The git dir the worktree's `.git` must point to; checked before every call when given. */
  expectedGitDir?: string;
  timeoutMs?: number;
  input?: string;
  /** Extra env (still scrubbed of secrets). */
  env?: Record<string, string>;
  signal?: AbortSignal;
}

export interface SafeGitResult {
  exitCode: number;
  stdout: string;
  stdoutBytes: Buffer;
  stderr: string;
}

/** Runs `git <args>` in `cwd` with hardened config and env. Diff-like commands get --no-ext-diff --no-textconv. */
export async function safeGit(cwd: string, args: readonly string[], opts: SafeGitOptions = {}): Promise<SafeGitResult> {
  if (opts.expectedGitDir !== undefined) assertGitPointer(cwd, opts.expectedGitDir);
  const config = SAFE_GIT_CONFIG.flatMap((c) => ['-c', c]);
  const full = [...config, ...neutraliseFilters(cwd), ...hardenSubcommand(args)];
  const result = await spawnCapture(['git', ...full], {
    cwd,
    env: gitEnv(opts.env),
    timeoutMs: opts.timeoutMs ?? 60_000,
    ...(opts.input !== undefined ? { input: opts.input } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  return { exitCode: result.exitCode ?? 1, stdout: result.stdout, stdoutBytes: result.stdoutBytes, stderr: result.stderr };
}

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
  if (['diff', 'log', 'show', 'format-patch'].includes(sub)) return [sub, '--no-ext-diff', '--no-textconv', ...rest];
  return [sub, ...rest];
}

/**
 * `.gitattributes` in the worktree can name filter/diff/merge drivers; their commands come from config,
 * which agents cannot write, but a driver named in attributes is still neutralised in case it is defined.
 */
function neutraliseFilters(cwd: string): string[] {
  const names = new Set<string>();
  for (const file of ['.gitattributes', '.git/info/attributes']) {
    let text: string;
    try {
      text = fs.readFileSync(nodePath.join(cwd, file), 'utf8');
    } catch {
      continue;
    }
    for (const m of text.matchAll(/\b(filter|diff|merge)=([A-Za-z0-9_.-]+)/g)) names.add(`${m[1] ?? ''}\u0000${m[2] ?? ''}`);
  }
  const out: string[] = [];
  for (const key of names) {
    const [kind, name] = key.split('\u0000') as [string, string];
    if (kind === 'filter') out.push('-c', `filter.${name}.clean=`, '-c', `filter.${name}.smudge=`, '-c', `filter.${name}.process=`, '-c', `filter.${name}.required=false`);
    if (kind === 'diff') out.push('-c', `diff.${name}.command=`, '-c', `diff.${name}.textconv=`);
    if (kind === 'merge') out.push('-c', `merge.${name}.driver=`);
  }
  return out;
}

function gitEnv(extra: Record<string, string> = {}): Record<string, string> {
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
