// Git against the fleet's remote (clone, fetch, push). Unlike the hardened runner ACIA uses inside
// worktrees, this needs the user's transports and credentials (ssh agent, credential helpers), so it
// runs with the worker's own environment; it still runs no hook, and it never runs in a directory an
// agent could have written git config to: clones are fresh or kept from a sandboxed job of the same run
// (the sandbox hides .git from agents), and a kept one is reused only with its config and alternates as
// the worker left them and nothing that redirects git (task-clones.ts).
import { AciaError } from '../core/errors.js';
import { hostEnv, launcherCwd } from '../core/contain/host-process.js';
import { spawnCapture } from '../core/sandbox/spawn-collect.js';
import { resolve } from 'node:path';

export async function remoteGit(cwd: string, args: readonly string[], o: { allowFail?: boolean } = {}): Promise<{ exitCode: number; stderr: string }> {
  // Through the containment module: git reaches the clone with -C from an empty directory, and no search
  // path entry inside the clone (a submitter's repository) survives in its environment.
  const env = hostEnv(process.env, [cwd]);
  // Local paths are allowed (the worker's policy decides which); transports that run a command are not.
  const run = () =>
    spawnCapture(['git', '-C', resolve(cwd), '-c', 'core.hooksPath=/dev/null', '-c', 'protocol.file.allow=always', '-c', 'protocol.ext.allow=never', '-c', 'protocol.fd.allow=never', ...args], { cwd: launcherCwd(), env, timeoutMs: 300_000 });
  let r = await run();
  // A fetch racing other workers' pushes to the same remote has failed now and then with "did not send
  // all necessary objects" (seen once in a few runs of the PostgreSQL-outage suite; cause not found): a
  // fetch changes nothing when it fails, so it is tried twice more before the run stops on it. A ref the
  // remote does not have is its answer, not a failure: asking again only waits (every new run's first
  // fetch of its own branches waited out both delays, 2 s, before it began).
  for (const delay of args[0] === 'fetch' ? [500, 1_500] : []) {
    if ((r.exitCode ?? 1) === 0 || !fetchWorthRetrying(r.stderr)) break;
    await new Promise((done) => setTimeout(done, delay));
    r = await run();
  }
  const exitCode = r.exitCode ?? 1;
  if (exitCode !== 0 && !o.allowFail) {
    throw new AciaError('INTERNAL', `git ${args[0] ?? ''} failed: ${r.stderr.trim().split('\n').at(-1) ?? ''}`, { hint: 'the worker must be able to clone from and push to the submitted repository URL' });
  }
  return { exitCode, stderr: r.stderr };
}

/** Whether a failed fetch could go differently if tried again: not when the remote lacks a ref it was asked for. */
export function fetchWorthRetrying(stderr: string): boolean {
  return !/couldn't find remote ref/.test(stderr);
}

/** Waits between push attempts (ms): a remote that refuses for a while (a freeze, a restart) gets ~15 s. */
export const PUSH_RETRY_DELAYS_MS = [1_000, 2_000, 4_000, 8_000];

/**
 * Pushes a run's branch with `tryPush` (one `git push`), retrying with backoff when the remote refuses
 * (a hook that says no for a while, a remote restarting). When it still refuses, the error carries
 * what the remote said (its `remote:` lines, where a hook explains itself), and the run ends with it as
 * its reason; the ledger never names a commit the remote did not take, since a checkpoint is recorded
 * after its push. `tryPush` throws for what no retry can fix (another worker owns the branch now).
 */
export async function pushWithRetry(branch: string, tryPush: () => Promise<{ exitCode: number; stderr: string }>, delays: readonly number[] = PUSH_RETRY_DELAYS_MS): Promise<void> {
  let said = '';
  for (let attempt = 0; attempt <= delays.length; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, delays[attempt - 1]));
    const r = await tryPush();
    if (r.exitCode === 0) return;
    const lines = r.stderr.split('\n').map((l) => l.trim()).filter(Boolean);
    const fromRemote = lines.filter((l) => l.startsWith('remote:')).map((l) => l.slice('remote:'.length).trim());
    said = (fromRemote.length > 0 ? fromRemote : lines.slice(-1)).join(' / ').slice(0, 500);
  }
  throw new AciaError('INTERNAL', `the remote rejected the push of ${branch} (${delays.length + 1} attempts): ${said}`, {
    hint: 'fix the remote (permissions, hooks, protected branches), then `acia resume <runId> --db ...` continues the run',
  });
}
