// The Python virtualenv a project's tests should run in: the one the user activated ($VIRTUAL_ENV), or the
// project's own `.venv` / `venv` (what `python -m venv .venv`, uv, and Poetry with `in-project = true`
// make). Its interpreter runs pytest, so a test dependency installed only in the venv is found.
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { exists, isRealDir } from './deps.js';
import { isWithin } from './path-guard.js';

export interface FoundVenv {
  /** As commands see it: relative to the checkout when inside it, else absolute. */
  path: string;
  why: string;
}

export function findProjectVenv(checkout: string, env: NodeJS.ProcessEnv): FoundVenv | null {
  const active = env.VIRTUAL_ENV;
  if (active !== undefined && nodePath.isAbsolute(active)) {
    const version = venvVersion(active);
    if (version !== null) {
      const inside = isWithin(checkout, active);
      const path = inside ? nodePath.relative(checkout, active) || '.' : active;
      return { path, why: `$VIRTUAL_ENV (${path}, Python ${version})` };
    }
  }
  for (const name of ['.venv', 'venv']) {
    const dir = nodePath.join(checkout, name);
    if (!isRealDir(dir)) continue;
    const version = venvVersion(dir);
    if (version === null) continue;
    return { path: name, why: `${name} (pyvenv.cfg, Python ${version}${layoutNote(checkout)})` };
  }
  return null;
}

/** Which tool made an in-project venv, when the project says (for `acia config`'s why). */
function layoutNote(checkout: string): string {
  if (exists(nodePath.join(checkout, 'poetry.toml')) || exists(nodePath.join(checkout, 'poetry.lock'))) return '; Poetry in-project';
  if (exists(nodePath.join(checkout, 'uv.lock'))) return '; uv';
  return '';
}

/** The Python version a venv's pyvenv.cfg records ('?' when it does not say), or null when it is no venv. */
function venvVersion(venv: string): string | null {
  const cfg = nodePath.join(venv, 'pyvenv.cfg');
  let text: string;
  try {
    const st = fs.lstatSync(cfg);
    if (!st.isFile() || st.size > 16 * 1024) return null;
    text = fs.readFileSync(cfg, 'utf8');
  } catch {
    return null;
  }
  const m = /^\s*(?:version|version_info)\s*=\s*(\d+\.\d+(?:\.\d+)?)/m.exec(text);
  return m?.[1] ?? '?';
}
