// The bubblewrap runner: each command in fresh namespaces, the worktree the only writable place, limits applied.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import * as os from 'node:os';
import { AciaError } from '../errors.js';
import type { CommandOutcome, CommandRunner, RunCommandOptions } from '../tools/types.js';
import { buildSandboxEnv } from './env.js';
import { dependencyDirsCached, interpreterDirs, isRealDir, linkDependencies, SANDBOX_ORIGINALS, type LinkReport } from './deps.js';
import { launcherCwd } from '../contain/host-process.js';
import { materializeScript, pnpmStoreScript } from './npm-materialize.js';
import { NO_NETWORK_NOTE, runsInstaller, runsNodeInstaller, runsPipInstaller, runsPnpmInstaller } from './installers.js';
import { gitPathsOf, type GitPaths } from './git-paths.js';
import { homeView, type HomeView } from './home-view.js';
import { checkoutsToMask, maskedDirs, sanitisedGitConfigBinds } from './masks.js';
import { checkoutOf, pathInsideView, taskView, type Mount, type TaskView, type TaskViewOptions } from './task-view.js';
import { hasTaskCopy, venvCopyScript } from './venv-copy.js';
import { packageRoot } from '../package-root.js';
import { isWithin } from './path-guard.js';
import { createPidsCgroup } from './pids-cgroup.js';
import { proxyEnv, parseHostRule, SANDBOX_PROXY_PORT, startEgressProxy, type EgressProxy } from './egress-proxy.js';
import { DEFAULT_OUTPUT_CAP, spawnCollect } from './spawn-collect.js';

export interface SandboxLimits {
  maxProcesses: number;
  maxFileBytes: number;
  /** Memory per command: cgroup memory.max when ACIA may create cgroups, else RLIMIT_DATA per process. */
  maxMemoryBytes: number;
  /** Size of the sandbox's private /tmp (a tmpfs, otherwise up to half of RAM). */
  tmpBytes: number;
}
const MIB = 1024 * 1024;
export const DEFAULT_LIMITS: SandboxLimits = { maxProcesses: 256, maxFileBytes: 256 * MIB, maxMemoryBytes: 4096 * MIB, tmpBytes: 1024 * MIB };

export interface BwrapRunnerOptions {
  /** The worktree: the only writable directory. */
  root: string;
  allowedHosts?: readonly string[];
  limits?: Partial<SandboxLimits>;
  parentEnv?: NodeJS.ProcessEnv;
  bwrapPath?: string;
}

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
  argv(command: string, cwd: string, egress?: { dir: string }, viewOptions: TaskViewOptions = {}, readOnlyPaths: readonly string[] = []): string[] {
    const realCwd = fs.realpathSync(cwd);
    if (!isWithin(this.root, realCwd)) throw new AciaError('PATH_OUTSIDE_ROOT', `cwd ${cwd} is outside the worktree`);
    const bwrap = this.options.bwrapPath ?? 'bwrap';
    const parentEnv = this.options.parentEnv ?? process.env;
    const a: string[] = [bwrap, '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
    // --size needs bubblewrap 0.8; an older one still gets private tmpfs mounts, just not bounded ones.
    const sized = (): string[] => (supportsTmpfsSize(bwrap) ? ['--size', String(this.limits.tmpBytes)] : []);
    a.push(...sized(), '--tmpfs', '/tmp');
    const hidden = maskedDirs(parentEnv);
    for (const dir of hidden) a.push(...sized(), '--tmpfs', dir);
    for (const file of SECRET_FILES) if (fs.existsSync(file)) a.push('--ro-bind', '/dev/null', file);
    const git = gitPathsOf(this.root);
    // Hide every checkout around this worktree — the user's (its untracked .env, other tasks' worktrees,
    // the run ledgers), and the one owning the git dir when the user's is a linked worktree or a submodule.
    const masked = checkoutsToMask(this.root, git);
    for (const checkout of masked) a.push('--tmpfs', checkout);
    // ACIA's own installation and node's stay readable when a mask would hide them (a clone under /tmp,
    // node from nvm in a home): the MCP servers, ACP agents and node a sandboxed command may need.
    for (const dir of toolchainDirs(['/tmp', ...hidden], masked)) a.push('--ro-bind', dir, dir);
    const view = this.view(git, [...hidden, ...masked], viewOptions);
    // The user's package managers and interpreters, read-only, in a private HOME at the home's own path.
    const home = this.home();
    // The worktree at the checkout's own path, its installed dependencies read-only on top (task-view.ts).
    for (const m of [...home.mounts, ...view.mounts]) a.push(...mountArgs(m));
    // ...and git config files replaced by copies without remotes, tokens or extra headers.
    for (const [src, dest] of this.gitConfigBinds(git)) a.push('--ro-bind', src, view.gitPath(dest));
    // Files the caller names on purpose (a user's hook script in a masked home), over the masks, read-only.
    for (const p of readOnlyPaths) if (!isWithin(this.root, p)) a.push('--ro-bind', p, p);
    a.push('--unshare-all', '--unshare-user', '--disable-userns', '--cap-drop', 'ALL');
    a.push('--die-with-parent', '--new-session', '--hostname', 'acia-sandbox');
    a.push('--chdir', nodePath.join(view.at, nodePath.relative(this.root, realCwd)), '--');
    // RLIMIT_DATA, not RLIMIT_AS: it counts memory a process writes to, not address space runtimes
    // (V8, Go, the JVM) reserve up front, so it bounds a memory hog without breaking them.
    a.push('prlimit', `--nproc=${this.limits.maxProcesses}`, `--fsize=${this.limits.maxFileBytes}`, `--data=${this.limits.maxMemoryBytes}`, `--core=0`, '--');
    if (egress) {
      // Still no network namespace of its own to reach out of: only the proxy's socket, read-only.
      a.splice(a.indexOf('--unshare-all'), 0, '--ro-bind', egress.dir, SANDBOX_NET_DIR);
      a.push('/bin/sh', '-c', egressWrapper(), 'acia-sandbox', command);
    } else {
      a.push('/bin/sh', '-c', command);
    }
    return a;
  }

  /**
   * The argv and environment for a long-lived process in this sandbox (an MCP server): the same profile
   * as `run`, with the egress proxy when hosts are allowed. The caller spawns it and owns its pipes.
   */
  async spawnSpec(command: string, cwd: string): Promise<{ argv: string[]; env: Record<string, string> }> {
    const proxy = this.allowedHosts.length > 0 ? await sharedProxy(this.allowedHosts) : null;
    return { argv: this.argv(command, cwd, proxy ?? undefined), env: this.env(proxy !== null) };
  }

  /** HOME inside the sandbox (the user's home path, private and empty but for tools; home-view.ts). */
  homePath(): string {
    return this.home().home;
  }

  /**
   * Where a path of the worktree is inside the sandbox: under the checkout's own path for a task worktree
   * (task-view.ts). A process given a path (an ACP agent's cwd, an MCP server's argument) needs this one.
   */
  pathInside(hostPath: string): string {
    return pathInsideView(this.root, hostPath);
  }

  /** The environment of a command: the scrubbed parent's, HOME as homeView chose, and the egress proxy. */
  private env(egress: boolean): Record<string, string> {
    const home = this.home();
    return buildSandboxEnv({ home: home.home, extra: { ...home.env, ...(egress ? proxyEnv() : {}) } }, this.options.parentEnv ?? process.env);
  }

  /**
   * Lays the checkout's installed dependencies out in this (fresh) worktree the way the sandbox shows
   * them: node_modules as links into the read-only originals, mount points for venvs and PnP files.
   */
  layDependencies(worktree: string = this.root): LinkReport | null {
    if (fs.realpathSync(worktree) !== this.root) throw new AciaError('PATH_OUTSIDE_ROOT', `${worktree} is not this runner's worktree`);
    const checkout = checkoutOf(this.root, gitPathsOf(this.root));
    return checkout === null ? null : linkDependencies(checkout, this.root, dependencyDirsCached(checkout), 'sandbox');
  }

  /**
   * A failed install with no allowed host at all could reach no registry, whatever the tool says (pip
   * without retries just finds no version): say so, for the agent and for the dev task's escalation.
   */
  private networkNote(command: string, o: CommandOutcome): string | null {
    if (o.exitCode === 0 || o.timedOut || this.allowedHosts.length > 0 || !runsInstaller(command)) return null;
    return NO_NETWORK_NOTE;
  }

  /**
   * An installer gets the task's own copies of what it writes first: npm's, Yarn 1's and pnpm's a real
   * copy of the installed node_modules (npm-materialize.ts; pnpm a store of the task's own too), pip's a
   * copy of each venv (venv-copy.ts).
   */
  private withTaskCopies(command: string): { command: string; view: TaskViewOptions } {
    const pnpm = runsPnpmInstaller(command);
    const node = pnpm || runsNodeInstaller(command);
    const pip = runsPipInstaller(command);
    const checkout = node || pip ? checkoutOf(this.root, gitPathsOf(this.root)) : null;
    if (checkout === null) return { command, view: {} };
    const dirs = dependencyDirsCached(checkout);
    const steps: string[] = [];
    const nodeModules = node ? dirs.filter((d) => d.kind === 'node_modules' && fs.existsSync(nodePath.join(this.root, d.rel))).map((d) => nodePath.join(checkout, d.rel)) : [];
    if (nodeModules.length > 0) steps.push(materializeScript(nodeModules));
    // pnpm's store is named in the workspace root's node_modules (the one dependency dir at the top).
    const rootModules = pnpm ? dirs.find((d) => d.kind === 'node_modules' && !d.rel.includes('/')) : undefined;
    if (rootModules !== undefined && nodeModules.includes(nodePath.join(checkout, rootModules.rel))) steps.push(pnpmStoreScript(nodePath.join(checkout, rootModules.rel)));
    const venvs = pip ? dirs.filter((d) => d.kind === 'venv' && isRealDir(nodePath.join(this.root, d.rel)) && !hasTaskCopy(nodePath.join(this.root, d.rel))) : [];
    if (venvs.length > 0) steps.push(venvCopyScript(venvs.map((d) => ({ from: nodePath.join(SANDBOX_ORIGINALS, d.rel), to: nodePath.join(checkout, d.rel) }))));
    return { command: steps.length === 0 ? command : `${steps.join('\n')}\n${command}`, view: venvs.length > 0 ? { copyVenvs: true } : {} };
  }

  private view(git: GitPaths, hidden: string[], o: TaskViewOptions = {}): TaskView {
    return taskView(this.root, git, hidden, (name, text) => this.scratchFile(name, text), o);
  }

  private homeCache: HomeView | null = null;
  /** Computed once per runner (what a home holds does not change during a run), whoever asks first. */
  private home(): HomeView {
    if (this.homeCache === null) {
      const parentEnv = this.options.parentEnv ?? process.env;
      const git = gitPathsOf(this.root);
      this.homeCache = homeView({
        parentEnv,
        hidden: ['/tmp', ...maskedDirs(parentEnv)],
        checkouts: checkoutsToMask(this.root, git),
        extraTools: interpreterDirs(checkoutOf(this.root, git), parentEnv),
        writeFile: (name, text) => this.scratchFile(name, text),
      });
    }
    return this.homeCache;
  }

  private scratch: string | null = null;
  private readonly scratchFiles = new Map<string, string>();
  /** A generated file (a sanitised rc copy, the relocated `.git` pointer) in this runner's scratch directory. */
  private scratchFile(name: string, text: string): string {
    const known = this.scratchFiles.get(name);
    if (known !== undefined && fs.readFileSync(known, 'utf8') === text) return known;
    this.scratch ??= fs.mkdtempSync(nodePath.join(scratchDir(), 'run-'));
    const file = nodePath.join(this.scratch, `${name}-${this.scratchFiles.size}`);
    fs.writeFileSync(file, text, { mode: 0o644 });
    this.scratchFiles.set(name, file);
    return file;
  }

  private configBinds: [string, string][] | null = null;
  private gitConfigBinds(git: GitPaths): [string, string][] {
    this.configBinds ??= sanitisedGitConfigBinds(git, fs.mkdtempSync(nodePath.join(scratchDir(), 'cfg-')));
    return this.configBinds;
  }

  async run(command: string, opts: RunCommandOptions): Promise<CommandOutcome> {
    const proxy = this.allowedHosts.length > 0 ? await sharedProxy(this.allowedHosts) : null;
    const prepared = this.withTaskCopies(command);
    let argv = this.argv(prepared.command, opts.cwd, proxy ?? undefined, prepared.view, opts.readOnlyPaths);
    const env = { ...this.env(proxy !== null), ...opts.env };
    const cgroup = createPidsCgroup(this.limits.maxProcesses, this.limits.maxMemoryBytes);
    if (cgroup) argv = ['/bin/sh', '-c', 'echo $$ > "$0" && exec "$@"', cgroup.procsFile, ...argv];
    try {
      const outcome = await spawnCollect(argv, {
        // bwrap chdirs into the worktree inside the sandbox; on the host it starts in an empty directory.
        cwd: launcherCwd(),
        env,
        timeoutMs: opts.timeoutMs,
        outputCapBytes: opts.outputCapBytes ?? DEFAULT_OUTPUT_CAP,
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(opts.input === undefined ? {} : { input: opts.input }),
        ...(opts.separate ? { separate: true } : {}),
      });
      const note = limitNote(outcome, this.limits, cgroup?.oomKilled() ?? false) ?? this.networkNote(command, outcome);
      return note === null ? outcome : { ...outcome, output: `${outcome.output}\n${note}` };
    } finally {
      cgroup?.remove();
    }
  }
}

/** A line telling the agent (and the ledger) which sandbox limit a failed command ran into, or null. */
export function limitNote(o: CommandOutcome, limits: SandboxLimits, oomKilled: boolean): string | null {
  if (o.exitCode === 0) return null;
  const mib = (n: number) => `${Math.round(n / MIB)} MiB`;
  if (oomKilled || /Cannot allocate memory|MemoryError|out of memory|bad_alloc|allocation failed|memory exhausted/i.test(o.output)) {
    return `[sandbox limit: the command ran out of memory; each command may use ${mib(limits.maxMemoryBytes)} (config sandboxLimits.memoryMb)]`;
  }
  if (/No space left on device/i.test(o.output)) {
    return `[sandbox limit: a disk filled up; the sandbox /tmp holds ${mib(limits.tmpBytes)} (config sandboxLimits.tmpMb), files are limited to ${mib(limits.maxFileBytes)}]`;
  }
  if (/File size limit exceeded/i.test(o.output) || o.signal === 'SIGXFSZ') {
    return `[sandbox limit: a file passed ${mib(limits.maxFileBytes)}]`;
  }
  return null;
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

const sizeSupport = new Map<string, boolean>();
function supportsTmpfsSize(bwrap: string): boolean {
  let ok = sizeSupport.get(bwrap);
  if (ok === undefined) {
    const help = spawnSync(bwrap, ['--help'], { encoding: 'utf8', timeout: 5_000 });
    ok = `${help.stdout ?? ''}${help.stderr ?? ''}`.includes('--size');
    sizeSupport.set(bwrap, ok);
  }
  return ok;
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

export { enclosingCheckout } from './masks.js';

function mountArgs(m: Mount): string[] {
  switch (m.op) {
    case 'bind':
    case 'ro-bind':
      return [`--${m.op}`, m.src, m.dest];
    case 'symlink':
      return ['--symlink', m.target, m.dest];
    case 'dir':
      return ['--dir', m.dest];
  }
}

let scratch: string | null = null;
/** One private host directory per process for the sanitised config copies, removed at exit. */
function scratchDir(): string {
  if (scratch === null) {
    const dir = fs.mkdtempSync(nodePath.join(os.tmpdir(), 'acia-sandbox-'));
    scratch = dir;
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  }
  return scratch;
}

/** This package's root and node's install prefix. */
const TOOLCHAIN: readonly string[] = [packageRoot(), nodePath.dirname(nodePath.dirname(process.execPath))].flatMap((d) => {
  try {
    return [fs.realpathSync(d)];
  } catch {
    return [];
  }
});

/**
 * The toolchain directories a mask covers, to bind back read-only; never one that overlaps a masked
 * checkout (running ACIA on its own clone must not unmask that checkout's untracked files).
 */
export function toolchainDirs(maskRoots: readonly string[], checkouts: readonly string[], dirs: readonly string[] = TOOLCHAIN): string[] {
  return dirs.filter(
    (d) => d !== '/' && maskRoots.some((m) => isWithin(m, d)) && !checkouts.some((c) => isWithin(c, d) || isWithin(d, c)),
  );
}
