// The bubblewrap runner: each command in fresh namespaces, the worktree the only writable place, limits applied.
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { AciaError } from '../errors.js';
import type { CommandOutcome, CommandRunner, RunCommandOptions } from '../tools/types.js';
import { buildSandboxEnv } from './env.js';
import { gitPathsOf } from './git-paths.js';
import { isWithin } from './path-guard.js';
import { createPidsCgroup } from './pids-cgroup.js';
import { DEFAULT_OUTPUT_CAP, spawnCollect } from './spawn-collect.js';

export interface SandboxLimits {
  maxProcesses: number;
  maxFileBytes: number;
}
export const DEFAULT_LIMITS: SandboxLimits = { maxProcesses: 256, maxFileBytes: 256 * 1024 * 1024 };

export interface BwrapRunnerOptions {
  /** The worktree: the only writable directory. */
  root: string;
  allowedHosts?: readonly string[];
  limits?: Partial<SandboxLimits>;
  parentEnv?: NodeJS.ProcessEnv;
  bwrapPath?: string;
}

const SANDBOX_HOME = '/tmp/acia-home';
/** Host files that hold secrets even on a read-only root. */
const SECRET_FILES = ['/etc/shadow', '/etc/gshadow', '/etc/sudoers', '/etc/ssh/ssh_host_rsa_key', '/etc/ssh/ssh_host_ecdsa_key', '/etc/ssh/ssh_host_ed25519_key'];

export class BwrapRunner implements CommandRunner {
  readonly kind = 'bwrap' as const;
  private readonly root: string;
  private readonly limits: SandboxLimits;

  constructor(private readonly options: BwrapRunnerOptions) {
    if ((options.allowedHosts ?? []).length > 0) {
      // A proxy that filters by host is not built yet; sharing the host network would be a fake allow-list.
      throw new AciaError('SANDBOX_UNAVAILABLE', 'allowedHosts is not supported by the bwrap sandbox yet', {
        hint: 'remove allowedHosts from .acia/config.json (commands then run with no network), or use --sandbox off',
      });
    }
    this.root = fs.realpathSync(options.root);
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
  }

  /** The full argv (bwrap ... -- prlimit ... sh -c command), exposed for tests and `--debug`. */
  argv(command: string, cwd: string): string[] {
    const realCwd = fs.realpathSync(cwd);
    if (!isWithin(this.root, realCwd)) throw new AciaError('PATH_OUTSIDE_ROOT', `cwd ${cwd} is outside the worktree`);
    const a: string[] = [this.options.bwrapPath ?? 'bwrap', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
    a.push('--tmpfs', '/tmp');
    for (const dir of maskedDirs(this.options.parentEnv ?? process.env)) a.push('--tmpfs', dir);
    for (const file of SECRET_FILES) if (fs.existsSync(file)) a.push('--ro-bind', '/dev/null', file);
    a.push('--dir', SANDBOX_HOME);
    const git = gitPathsOf(this.root);
    // A task worktree sits inside the user's checkout (.acia/worktrees/...). Hide that checkout — its
    // untracked secrets (.env), other tasks' worktrees, the run ledgers — and show only this worktree.
    const checkout = enclosingCheckout(this.root, git.commonDir);
    if (checkout !== null) a.push('--tmpfs', checkout);
    a.push('--bind', this.root, this.root);
    // Git metadata stays read-only even though the worktree is writable: hooks and config run outside later.
    for (const p of git.readOnly) a.push('--ro-bind', p, p);
    a.push('--unshare-all', '--unshare-user', '--disable-userns', '--cap-drop', 'ALL');
    a.push('--die-with-parent', '--new-session', '--hostname', 'acia-sandbox');
    a.push('--chdir', realCwd, '--');
    a.push('prlimit', `--nproc=${this.limits.maxProcesses}`, `--fsize=${this.limits.maxFileBytes}`, `--core=0`, '--');
    a.push('/bin/sh', '-c', command);
    return a;
  }

  async run(command: string, opts: RunCommandOptions): Promise<CommandOutcome> {
    const env = buildSandboxEnv({ home: SANDBOX_HOME }, this.options.parentEnv ?? process.env);
    let argv = this.argv(command, opts.cwd);
    const cgroup = createPidsCgroup(this.limits.maxProcesses);
    if (cgroup) argv = ['/bin/sh', '-c', 'echo $$ > "$0" && exec "$@"', cgroup.procsFile, ...argv];
    const cap = opts.outputCapBytes ?? DEFAULT_OUTPUT_CAP;
    try {
      return await spawnCollect(argv, {
        cwd: this.root,
        env,
        timeoutMs: opts.timeoutMs,
        outputCapBytes: cap,
        killAfterBytes: Math.max(cap * 32, 64 * 1024 * 1024),
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
    } finally {
      cgroup?.remove();
    }
  }
}

/** Homes and runtime dirs hidden behind empty tmpfs: the user's secrets and sockets (docker, ssh-agent). */
function maskedDirs(parentEnv: NodeJS.ProcessEnv): string[] {
  const dirs = new Set<string>(['/root', '/home', '/run', '/var/run', '/mnt', '/media']);
  if (parentEnv.HOME && nodePath.resolve(parentEnv.HOME) !== '/') dirs.add(nodePath.resolve(parentEnv.HOME));
  const out: string[] = [];
  for (const d of dirs) {
    try {
      const st = fs.lstatSync(d);
      if (st.isDirectory()) out.push(d); // a symlink (e.g. /var/run -> /run) is covered by its target
    } catch {
      /* absent */
    }
  }
  // Parents before children so a later mask is not hidden by an earlier one.
  return out.sort((x, y) => x.length - y.length);
}

/** The checkout that holds `root` as a nested linked worktree, or null when `root` is the checkout itself. */
export function enclosingCheckout(root: string, commonDir: string | null): string | null {
  if (commonDir === null || nodePath.basename(commonDir) !== '.git') return null;
  const checkout = nodePath.dirname(commonDir);
  return root !== checkout && isWithin(checkout, root) ? checkout : null;
}
