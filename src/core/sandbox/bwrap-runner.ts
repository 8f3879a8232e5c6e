// The bubblewrap runner: each command in fresh namespaces, the worktree the only writable place, limits applied.
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { AciaError } from '../errors.js';
import type { CommandOutcome, CommandRunner, RunCommandOptions } from '../tools/types.js';
import { buildSandboxEnv } from './env.js';
import { dependencyDirsCached } from './deps.js';
import { gitPathsOf } from './git-paths.js';
import { isWithin } from './path-guard.js';
import { createPidsCgroup } from './pids-cgroup.js';
import { proxyEnv, parseHostRule, SANDBOX_PROXY_PORT, startEgressProxy, type EgressProxy } from './egress-proxy.js';
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

  private readonly allowedHosts: readonly string[];

  constructor(private readonly options: BwrapRunnerOptions) {
    this.allowedHosts = options.allowedHosts ?? [];
    if (this.allowedHosts.length > 0) {
      // Fail now, not at the first command: a bad entry or a missing socat is a configuration problem.
      for (const h of this.allowedHosts) parseHostRule(h);
      if (!onPath('socat')) {
        throw new AciaError('SANDBOX_UNAVAILABLE', 'allowedHosts needs socat inside the sandbox, and it is not installed', {
          hint: 'install it (sudo apt-get install socat), or remove allowedHosts (commands then run with no network)',
        });
      }
    }
    this.root = fs.realpathSync(options.root);
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
  }

  /**
   * The full argv (bwrap ... -- prlimit ... sh -c command), exposed for tests and `--debug`. With `egress`
   * the proxy's socket directory is bound in and socat bridges 127.0.0.1:3128 to it before the command.
   */
  argv(command: string, cwd: string, egress?: { dir: string }): string[] {
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
    // Its installed dependencies stay visible, read-only, where the worktree's links point (deps.ts).
    if (checkout !== null) {
      for (const d of dependencyDirsCached(checkout)) {
        const p = nodePath.join(checkout, d.rel);
        a.push('--ro-bind', p, p);
      }
    }
    // Git metadata stays read-only even though the worktree is writable: hooks and config run outside later.
    for (const p of git.readOnly) a.push('--ro-bind', p, p);
    a.push('--unshare-all', '--unshare-user', '--disable-userns', '--cap-drop', 'ALL');
    a.push('--die-with-parent', '--new-session', '--hostname', 'acia-sandbox');
    a.push('--chdir', realCwd, '--');
    a.push('prlimit', `--nproc=${this.limits.maxProcesses}`, `--fsize=${this.limits.maxFileBytes}`, `--core=0`, '--');
    if (egress) {
      // Still no network namespace of its own to reach out of: only the proxy's socket, read-only.
      a.splice(a.indexOf('--unshare-all'), 0, '--ro-bind', egress.dir, SANDBOX_NET_DIR);
      a.push('/bin/sh', '-c', egressWrapper(), 'acia-sandbox', command);
    } else {
      a.push('/bin/sh', '-c', command);
    }
    return a;
  }

  async run(command: string, opts: RunCommandOptions): Promise<CommandOutcome> {
    const proxy = this.allowedHosts.length > 0 ? await sharedProxy(this.allowedHosts) : null;
    const env = buildSandboxEnv({ home: SANDBOX_HOME, ...(proxy ? { extra: proxyEnv() } : {}) }, this.options.parentEnv ?? process.env);
    let argv = this.argv(command, opts.cwd, proxy ?? undefined);
    const cgroup = createPidsCgroup(this.limits.maxProcesses);
    if (cgroup) argv = ['/bin/sh', '-c', 'echo $$ > "$0" && exec "$@"', cgroup.procsFile, ...argv];
    try {
      return await spawnCollect(argv, {
        cwd: this.root,
        env,
        timeoutMs: opts.timeoutMs,
        outputCapBytes: opts.outputCapBytes ?? DEFAULT_OUTPUT_CAP,
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
    } finally {
      cgroup?.remove();
    }
  }
}

/** Where the proxy's socket directory appears inside the sandbox (its /tmp is private tmpfs). */
const SANDBOX_NET_DIR = '/tmp/.acia-net';

/**
 * Starts socat on 127.0.0.1:3128 forwarding to the proxy socket, waits (up to 2 s) until it accepts,
 * then runs the command ($1). socat dies with the sandbox's PID namespace when the command ends.
 */
function egressWrapper(): string {
  const listen = `socat TCP-LISTEN:${SANDBOX_PROXY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${SANDBOX_NET_DIR}/proxy.sock`;
  const probe = `socat -u OPEN:/dev/null TCP:127.0.0.1:${SANDBOX_PROXY_PORT}`;
  return `${listen} 2>/dev/null & i=0; while [ $i -lt 200 ] && ! ${probe} 2>/dev/null; do sleep 0.01; i=$((i+1)); done; exec /bin/sh -c "$1"`;
}

/** One proxy per allow-list for the whole process; every runner with the same list shares it. */
const proxies = new Map<string, Promise<EgressProxy>>();
function sharedProxy(hosts: readonly string[]): Promise<EgressProxy> {
  const key = [...hosts].sort().join('\n');
  let p = proxies.get(key);
  if (!p) {
    p = startEgressProxy(hosts);
    proxies.set(key, p);
    p.catch(() => proxies.delete(key));
  }
  return p;
}

function onPath(name: string): boolean {
  return (process.env.PATH ?? '').split(nodePath.delimiter).some((dir) => {
    try {
      fs.accessSync(nodePath.join(dir, name), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
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
