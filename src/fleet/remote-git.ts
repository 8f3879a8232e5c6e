// Git against the fleet's remote (clone, fetch, push). Unlike the hardened runner ACIA uses inside
// worktrees, this needs the user's transports and credentials (ssh agent, credential helpers), so it
// runs with the worker's own environment; it still runs no hook, and it never runs in a directory an
// agent could have written git config to (clones are fresh; agents cannot write .git).
import { execa } from 'execa';
import { AciaError } from '../core/errors.js';

export async function remoteGit(cwd: string, args: readonly string[], o: { allowFail?: boolean } = {}): Promise<{ exitCode: number; stderr: string }> {
  const r = await execa('git', ['-c', 'core.hooksPath=/dev/null', '-c', 'protocol.file.allow=always', ...args], { cwd, reject: false, stdin: 'ignore', timeout: 300_000 });
  const exitCode = r.exitCode ?? 1;
  if (exitCode !== 0 && !o.allowFail) {
    throw new AciaError('INTERNAL', `git ${args[0] ?? ''} failed: ${String(r.stderr).trim().split('\n').at(-1) ?? ''}`, { hint: 'the worker must be able to clone from and push to the submitted repository URL' });
  }
  return { exitCode, stderr: String(r.stderr) };
}
