// Is a sandbox available here, and which runner does a `--sandbox` mode give: the one place that decides.
import { spawnSync } from 'node:child_process';
import { AciaError } from '../errors.js';
import type { CommandRunner } from '../tools/types.js';
import { BwrapRunner, type SandboxLimits } from './bwrap-runner.js';
import { HostRunner } from './host-runner.js';
import { spawnCapture } from './spawn-collect.js';

export const INSTALL_HINT = 'sudo apt-get install bubblewrap (Debian/Ubuntu), sudo dnf install bubblewrap (Fedora)';

export type SandboxStatus =
  | { status: 'available'; kind: 'bwrap'; reason: string }
  | { status: 'unavailable'; reason: string; install: string };

let cached: SandboxStatus | undefined;
let probing: Promise<SandboxStatus> | undefined;

/** The probe: bwrap with the exact namespace flags the runner uses (a binary that cannot create them is no sandbox). */
const PROBE_ARGS = ['--ro-bind', '/', '/', '--unshare-all', '--unshare-user', '--disable-userns', '--cap-drop', 'ALL', '--die-with-parent', '--', 'prlimit', '--nproc=64', '--', 'true'];

/** Probes bwrap and waits for the answer (cached for the process unless `fresh` or another binary is named). */
export function detectSandbox(options: { bwrapPath?: string; fresh?: boolean } = {}): SandboxStatus {
  if (cached && !options.fresh && options.bwrapPath === undefined) return cached;
  const probe = spawnSync(options.bwrapPath ?? 'bwrap', PROBE_ARGS, { encoding: 'utf8', timeout: 10_000 });
  const missing = (probe.error as { code?: string } | undefined)?.code === 'ENOENT';
  const result = classify(probe.error ? (missing ? 'missing' : probe.error.message) : null, probe.status, probe.stderr || '');
  if (options.bwrapPath === undefined) cached = result;
  return result;
}

/**
 * The same probe without blocking: `acia run` starts it first thing, so the bwrap process runs while git
 * answers the preflight's questions, and `detectSandbox` later finds the answer cached.
 */
export function probeSandbox(): Promise<SandboxStatus> {
  if (cached) return Promise.resolve(cached);
  probing ??= spawnCapture(['bwrap', ...PROBE_ARGS], { cwd: '/', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, timeoutMs: 10_000 }).then((r) => {
    const startError = r.exitCode === null && !r.timedOut ? r.stderr.replace(/^[\s\S]*failed to start bwrap: /, '').trim() : null;
    const missing = startError !== null && /\bENOENT\b/.test(startError);
    cached ??= classify(startError === null ? (r.timedOut ? 'timed out' : null) : missing ? 'missing' : startError, r.exitCode, r.stderr);
    return cached;
  });
  return probing;
}

function classify(startError: string | null, status: number | null, stderr: string): SandboxStatus {
  if (startError !== null) {
    return {
      status: 'unavailable',
      reason: startError === 'missing' ? 'bubblewrap (bwrap) is not installed' : `bwrap could not start: ${startError}`,
      install: INSTALL_HINT,
    };
  }
  if (status !== 0) {
    const why = stderr.trim().split('\n')[0] ?? '';
    return {
      status: 'unavailable',
      reason: `bwrap cannot create namespaces here (${why || `exit ${String(status)}`}); user namespaces may be disabled`,
      install: `${INSTALL_HINT}; and allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1)`,
    };
  }
  return { status: 'available', kind: 'bwrap', reason: 'bubblewrap with user, pid, net, ipc, uts namespaces' };
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
