// The check a dependency entry of the user's checkout (node_modules, .venv/venv, Yarn PnP's .yarn/cache,
// .yarn/unplugged and .pnp.* files) passes before it is linked into a worktree or bound into the sandbox.
// The sandbox masks the user's home and checkout and then binds these entries back read-only; bubblewrap
// resolves a bind's source on the host, so an entry that is a link (`.yarn/cache -> ~`) would bind the
// home right back. An entry is used only when every component from the checkout down is a real directory
// or file (lstat, never followed), its real path is that same path inside the checkout, and binding it
// would not uncover a masked directory.
import { lstatSync, realpathSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { isWithin as within } from '../sandbox/path-guard.js';

export type DependencyEntryCheck = { ok: true; path: string } | { ok: false; reason: string };

/**
 * Whether `<checkout>/<rel>` may be linked or bound, and its real path (where the worktrees' links point).
 * `rel` is '/'-separated. `masked` lists directories the sandbox hides (homes, other checkouts, the worktree's
 * parent tree): the entry may not contain one, or binding it would show it again.
 */
export function checkDependencyEntry(checkoutPath: string, rel: string, masked: readonly string[] = []): DependencyEntryCheck {
  const parts = rel.split('/');
  if (rel === '' || isAbsolute(rel) || parts.some((p) => p === '' || p === '.' || p === '..')) return { ok: false, reason: `${rel}: not a plain relative path` };
  let checkout: string;
  try {
    // The checkout itself is the user's (it may sit under a linked /tmp); what is below it is the clone's.
    checkout = realpathSync(checkoutPath);
  } catch {
    return { ok: false, reason: `${checkoutPath}: cannot be resolved` };
  }
  let at = checkout;
  for (const part of parts) {
    at = join(at, part);
    let st;
    try {
      st = lstatSync(at);
    } catch {
      return { ok: false, reason: `${rel}: missing` };
    }
    if (st.isSymbolicLink()) return { ok: false, reason: `${relative(checkout, at)} is a symbolic link` };
    if (at !== join(checkout, rel) && !st.isDirectory()) return { ok: false, reason: `${relative(checkout, at)} is not a directory` };
    if (at === join(checkout, rel) && !st.isDirectory() && !st.isFile()) return { ok: false, reason: `${rel} is neither a directory nor a regular file` };
  }
  let real: string;
  try {
    real = realpathSync(at);
  } catch {
    return { ok: false, reason: `${rel}: cannot be resolved` };
  }
  // No link on the way, so this only fails on a race (a component swapped since its lstat): refuse.
  if (real !== at || !within(checkout, real) || real === checkout) return { ok: false, reason: `${rel} resolves to ${real}, outside the checkout` };
  const uncovered = masked.find((m) => within(real, m));
  if (uncovered !== undefined) return { ok: false, reason: `${rel} holds ${uncovered}, which the sandbox hides` };
  return { ok: true, path: real };
}
