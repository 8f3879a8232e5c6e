// A directory ACIA keeps state in that other local users must not be able to plant anything in (a fleet
// worker's clones and mirrors, whose git config would run commands as the worker): created 0700 when
// missing; when it exists, it must be a real directory of this user that nobody else can write.
import { lstatSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AciaError } from '../errors.js';

/** A fresh private directory under the system temp dir (mkdtemp: a name nobody could have taken first). */
export function freshPrivateDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** `dir`, created private when missing, else checked: a directory (not a link), ours, writable by us alone. */
export function privateDir(dir: string, flag: string): string {
  const path = resolve(dir);
  mkdirSync(path, { recursive: true, mode: 0o700 });
  const st = lstatSync(path);
  const uid = process.getuid?.();
  const why = !st.isDirectory() ? 'is not a directory (a link?)' : uid !== undefined && st.uid !== uid ? `belongs to uid ${st.uid}, not to you` : (st.mode & 0o022) !== 0 ? `can be written by others (mode ${(st.mode & 0o777).toString(8)})` : null;
  if (why !== null) throw new AciaError('USAGE', `${flag} ${path} ${why}; give a directory of yours that nobody else can write`, { hint: `e.g. mkdir -m 700 ${path}` });
  return path;
}
