// Where this package is installed, for the files it ships next to its code (package.json, prompts, wiki
// templates, scenarios, schemas). Found by walking up from this module to the package.json named "acia",
// so the answer is the same from src/ (tests), dist/ (tsc output) and dist/bin/ (the bundled CLI, whose
// chunks sit at another depth than the modules they were built from).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | null = null;

export function packageRoot(): string {
  if (root !== null) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: unknown }).name === 'acia') return (root = dir);
    const up = dirname(dir);
    if (up === dir) throw new Error(`acia: cannot find the package root above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
}

/** A path inside the installed package. */
export function packagePath(...parts: string[]): string {
  return join(packageRoot(), ...parts);
}
