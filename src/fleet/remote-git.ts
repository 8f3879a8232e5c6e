// Git against the fleet's remote (clone, fetch, push). Unlike the hardened runner ACIA uses inside
// worktrees, this needs the user's transports and credentials (ssh agent, credential helpers), so it
// runs with the worker's own environment; it still runs no hook, and it never runs in a directory an
// agent could have written git config to (clones are fresh; agents cannot write .git).
import { AciaError } from '../core/errors.js';
import { spawnCapture } from '../core/sandbox/spawn-collect.js';

export async function remoteGit(cwd: string, args: readonly string[], o: { allowFail?: boolean } = {}): Promise<{ exitCode: number; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
  const r = await spawnCapture(['git', '-c', 'core.hooksPath=/dev/null', '-c', 'protocol.file.allow=always', ...args], { cwd, env, timeoutMs: 300_000 });
  const exitCode = r.exitCode ?? 1;
  if (exitCode !== 0 && !o.allowFail) {
    throw new AciaError('INTERNAL', `git ${args[0] ?? ''} failed: ${r.stderr.trim().split('\n').at(-1) ?? ''}`, { hint: 'the worker must be able to clone from and push to the submitted repository URL' });
  }
  return { exitCode, stderr: r.stderr };
}
