// Is a sandbox available here, and which runner does a `--sandbox` mode give: the one place that decides.
import { spawnSync } from 'node:child_process';
import { AciaError } from '../errors.js';
import type { CommandRunner } from '../tools/types.js';
import { BwrapRunner, type SandboxLimits } from './bwrap-runner.js';
import { HostRunner } from './host-runner.js';

export const INSTALL_HINT = 'sudo apt-get install bubblewrap (Debian/Ubuntu), sudo dnf install bubblewrap (Fedora)';

export type SandboxStatus =
  | { status: 'available'; kind: 'bwrap'; reason: string }
  | { status: 'unavailable'; reason: string; install: string };

let cached: SandboxStatus | undefined;

/** Probes bwrap with the exact namespace flags the runner uses (a binary that cannot create them is no sandbox). */
export function detectSandbox(options: { bwrapPath?: string; fresh?: boolean } = {}): SandboxStatus {
  if (cached && !options.fresh && options.bwrapPath === undefined) return cached;
  const bwrap = options.bwrapPath ?? 'bwrap';
  const probe = spawnSync(
    bwrap,
    ['--ro-bind', '/', '/', '--unshare-all', '--unshare-user', '--disable-userns', '--cap-drop', 'ALL', '--die-with-parent', '--', 'prlimit', '--nproc=64', '--', 'true'],
    { encoding: 'utf8', timeout: 10_000 },
  );
  let result: SandboxStatus;
  if (probe.error) {
    const missing = (probe.error as { code?: string }).code === 'ENOENT';
    result = {
      status: 'unavailable',
      reason: missing ? 'bubblewrap (bwrap) is not installed' : `bwrap could not start: ${probe.error.message}`,
      install: INSTALL_HINT,
    };
  } else if (probe.status !== 0) {
    const why = (probe.stderr || '').trim().split('\n')[0] ?? '';
    result = {
      status: 'unavailable',
      reason: `bwrap cannot create namespaces here (${why || `exit ${String(probe.status)}`}); user namespaces may be disabled`,
      install: `${INSTALL_HINT}; and allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1)`,
    };
  } else {
    result = { status: 'available', kind: 'bwrap', reason: 'bubblewrap with user, pid, net, ipc, uts namespaces' };
  }
  if (options.bwrapPath === undefined) cached = result;
  return result;
}

export type SandboxMode = 'auto' | 'bwrap' | 'off';

export interface CreateRunnerOptions {
  mode: SandboxMode;
  root: string;
  allowedHosts?: readonly string[];
  limits?: Partial<SandboxLimits>;
  parentEnv?: NodeJS.ProcessEnv;
}

/** The runner for a mode; throws SANDBOX_UNAVAILABLE with the install command when the sandbox cannot start. */
export function createRunner(options: CreateRunnerOptions): CommandRunner & { kind: 'bwrap' | 'off' } {
  if (options.mode === 'off') return new HostRunner(options.parentEnv ? { parentEnv: options.parentEnv } : {});
  const status = detectSandbox();
  if (status.status === 'unavailable') {
    throw new AciaError('SANDBOX_UNAVAILABLE', `no sandbox: ${status.reason}`, {
      hint: `install it: ${status.install} — or pass --sandbox off to run commands unsandboxed`,
    });
  }
  return new BwrapRunner({
    root: options.root,
    ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.parentEnv ? { parentEnv: options.parentEnv } : {}),
  });
}
