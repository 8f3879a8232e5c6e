// Editable Python installs (`pip install -e .`, poetry, uv, hatch) leave the checkout's absolute source
// path in the venv: a `.pth` line (`/home/u/app/src`) or a setuptools finder's MAPPING. In the sandbox the
// task's worktree is shown at that very path, so they resolve to the task's code. Without a sandbox they
// name the checkout's code: the host runner puts the task's copies of those directories first on
// PYTHONPATH instead, so the tests import what the task wrote.
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { isWithin } from './path-guard.js';

/** The source directories inside `checkout` that `venv`'s editable installs point at. */
export function editableSourceDirs(venv: string, checkout: string): string[] {
  const out = new Set<string>();
  for (const site of sitePackagesOf(venv)) {
    for (const name of safeReaddir(site)) {
      const file = nodePath.join(site, name);
      if (name.endsWith('.pth')) {
        for (const line of readSmall(file).split('\n')) {
          const p = line.trim();
          if (p.startsWith('/') && isWithin(checkout, p)) out.add(nodePath.normalize(p));
        }
      } else if (/^__editable__.*_finder\.py$/.test(name)) {
        // setuptools: MAPPING = {'pkg': '/home/u/app/src/pkg'}; the package's parent is the import root.
        const mapping = /MAPPING\s*(?::[^=\n]*)?=\s*\{([^}]*)\}/.exec(readSmall(file))?.[1] ?? '';
        for (const m of mapping.matchAll(/:\s*['"]([^'"]+)['"]/g)) {
          const p = m[1]!;
          if (p.startsWith('/') && isWithin(checkout, p)) out.add(nodePath.dirname(nodePath.normalize(p)));
        }
      }
    }
  }
  return [...out];
}

function sitePackagesOf(venv: string): string[] {
  const lib = nodePath.join(venv, 'lib');
  return safeReaddir(lib)
    .filter((n) => /^python3(\.\d+)?$/.test(n))
    .map((n) => nodePath.join(lib, n, 'site-packages'));
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/** A regular file's text up to 64 KiB; '' for anything else (a venv belongs to the checkout, which may be hostile). */
function readSmall(file: string): string {
  try {
    const st = fs.lstatSync(file);
    return st.isFile() && st.size <= 64 * 1024 ? fs.readFileSync(file, 'utf8') : '';
  } catch {
    return '';
  }
}
