// The check a tool's directory or file in a home (or under /tmp, whose host copy the sandbox also hides)
// passes before the sandbox binds it back read-only: corepack's cache, pnpm's store, Yarn Berry's cache,
// a Bun, pyenv or nvm install, a program on PATH, a virtualenv's base interpreter. A home holds keys and
// tokens, so only a real path (no link on the way) is bound that neither holds nor sits in a credential
// store, is not a home itself, and does not uncover a hidden checkout.
import { realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isWithin as within } from '../sandbox/path-guard.js';

/** What a home holds that no command may read: keys, tokens, credential helpers' stores. */
export const HOME_SECRETS = [
  '.ssh',
  '.aws',
  '.azure',
  '.gnupg',
  '.docker',
  '.kube',
  '.netrc',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.pypirc',
  '.git-credentials',
  '.gitconfig',
  '.config',
  '.password-store',
  '.local/share/keyrings',
  '.terraform.d',
  '.vault-token',
] as const;

export type HomeEntryCheck = { ok: true; path: string } | { ok: false; reason: string };

/**
 * Whether `path` may be bound read-only into the sandbox from behind the mask of `home`. `checkouts` are
 * the checkouts the sandbox hides.
 */
export function checkHomeEntry(path: string, home: string, checkouts: readonly string[]): HomeEntryCheck {
  const p = resolve(path);
  let real: string;
  try {
    real = realpathSync(p);
  } catch {
    return { ok: false, reason: `${p}: missing` };
  }
  if (real !== p) return { ok: false, reason: `${p} goes through a symbolic link (to ${real})` };
  if (p === '/' || p === home || within(p, home)) return { ok: false, reason: `${p} is (or holds) the home itself` };
  for (const name of HOME_SECRETS) {
    const secret = join(home, name);
    if (within(p, secret) || within(secret, p)) return { ok: false, reason: `${p} holds or is inside ${secret}` };
  }
  const checkout = checkouts.find((c) => within(p, c) || within(c, p));
  if (checkout !== undefined) return { ok: false, reason: `${p} would uncover the hidden checkout ${checkout}` };
  return { ok: true, path: p };
}
