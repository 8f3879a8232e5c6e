// The check every path passes before the sandbox binds it back into view, read-only, from behind a mask:
// a dependency dir of the user's checkout, or a tool's state or installation in a home. The checkout may
// be a hostile clone (a `node_modules` that is a link to ~/.ssh) and a home holds credentials, so a bind
// is admitted only for a real path (no link on the way), inside what it claims to be in, that uncovers
// no credential store and no hidden checkout.
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { isWithin } from './path-guard.js';

export type BindRequest =
  /** A dependency dir or file of `checkout` (node_modules, a venv, a Yarn PnP file). */
  | { kind: 'dependency'; path: string; checkout: string }
  /** A tool's state or installation under `home` (or another hidden root such as /tmp). */
  | { kind: 'tool'; path: string; home: string; checkouts: readonly string[] };

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
];

/** True when `path` may be bound read-only into the sandbox for `req`. */
export function admitBind(req: BindRequest): boolean {
  const path = nodePath.resolve(req.path);
  if (!isRealPath(path)) return false;
  if (req.kind === 'dependency') {
    if (path === req.checkout || !isWithin(req.checkout, path)) return false;
    return !nodePath.relative(req.checkout, path).split(nodePath.sep).some((seg) => seg === '.git' || seg === '.acia');
  }
  if (path === '/' || path === req.home) return false;
  for (const name of HOME_SECRETS) {
    const secret = nodePath.join(req.home, name);
    if (isWithin(path, secret) || isWithin(secret, path)) return false;
  }
  return !req.checkouts.some((c) => isWithin(path, c) || isWithin(c, path));
}

/** No symbolic link anywhere on the way: the path is its own real path, and it exists. */
function isRealPath(path: string): boolean {
  try {
    return fs.realpathSync(path) === path;
  } catch {
    return false;
  }
}
