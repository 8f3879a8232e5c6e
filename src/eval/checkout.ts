// A fresh checkout of an instance at its base commit, with no history after it: no remote, no other
// branch or tag, no reflog, so an agent cannot read the fix out of the repository's future.
import { cpSync, existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { AciaError } from '../core/errors.js';
import type { Git } from '../team/git.js';
import { isRemoteRepo, type LoadedInstance } from './instances.js';

/** Fixed identity and dates: a source directory committed this way gets the same commit id everywhere. */
export const MATERIALISE_ENV = {
  GIT_AUTHOR_NAME: 'acia-eval',
  GIT_AUTHOR_EMAIL: 'eval@acia.invalid',
  GIT_COMMITTER_NAME: 'acia-eval',
  GIT_COMMITTER_EMAIL: 'eval@acia.invalid',
  GIT_AUTHOR_DATE: '2000-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2000-01-01T00:00:00Z',
};

/** Clone and fetch may use local paths and https; nothing else (no ssh, no ext::). */
const CLONE_PROTOCOLS = ['-c', 'protocol.file.allow=always', '-c', 'protocol.https.allow=always'];

export async function prepareCheckout(git: Git, inst: LoadedInstance, target: string): Promise<string> {
  rmSync(target, { recursive: true, force: true });
  mkdirSync(target, { recursive: true });
  const src = inst.repoSource;
  if (!isRemoteRepo(src) && existsSync(src) && statSync(src).isDirectory() && !existsSync(join(src, '.git')) && !src.endsWith('.bundle')) {
    return materialise(git, inst, src, target);
  }
  if (!isRemoteRepo(src) && !existsSync(src)) throw new AciaError('FILE_NOT_FOUND', `${inst.origin}: repo ${src} does not exist`);
  const cloned = await git.run(target, [...CLONE_PROTOCOLS, 'clone', '-q', '--no-checkout', '--', src, '.'], { allowFail: true });
  if (cloned.exitCode !== 0) throw new AciaError('INPUT_INVALID', `${inst.origin}: cannot clone ${src}: ${lastLine(cloned.stderr)}`);
  const found = await git.run(target, ['rev-parse', '--verify', '--quiet', `${inst.base_commit}^{commit}`], { allowFail: true });
  if (found.exitCode !== 0) throw new AciaError('INPUT_INVALID', `${inst.origin}: base_commit ${inst.base_commit} is not in ${src}`);
  const base = found.stdout;
  await git.run(target, ['checkout', '-q', '-B', 'acia-eval-base', base]);
  await forgetTheFuture(git, target);
  return base;
}

/**
 * A plain source directory (the offline suite ships its buggy sources this way) becomes one commit.
 * Links are copied as links, their targets verbatim: by default cpSync rewrites a relative link into an
 * absolute one into the source tree, which made base_commit depend on where the task set lives and left
 * the checkout pointing back at it.
 */
async function materialise(git: Git, inst: LoadedInstance, src: string, target: string): Promise<string> {
  cpSync(src, target, { recursive: true, verbatimSymlinks: true });
  await git.run(target, ['init', '-q', '-b', 'acia-eval-base']);
  await git.run(target, ['add', '-A']);
  await git.run(target, ['commit', '-q', '--no-verify', '-m', `${inst.instance_id} at its base`], { env: MATERIALISE_ENV });
  const head = await git.head(target);
  if (!head.startsWith(inst.base_commit)) {
    throw new AciaError('INPUT_INVALID', `${inst.origin}: committing ${src} gives ${head}, not base_commit ${inst.base_commit}; the sources changed`, {
      hint: 'update base_commit, or restore the sources',
    });
  }
  return head;
}

async function forgetTheFuture(git: Git, repo: string): Promise<void> {
  await git.run(repo, ['remote', 'remove', 'origin'], { allowFail: true });
  const refs = (await git.run(repo, ['for-each-ref', '--format=%(refname)'])).stdout.split('\n').filter((r) => r !== '' && r !== 'refs/heads/acia-eval-base');
  for (const ref of refs) await git.run(repo, ['update-ref', '-d', ref]);
  await git.run(repo, ['reflog', 'expire', '--expire=now', '--all']);
  await git.run(repo, ['gc', '-q', '--prune=now']);
}

function lastLine(s: string): string {
  return s.split('\n').filter((l) => l.trim() !== '').at(-1) ?? 'git failed';
}
