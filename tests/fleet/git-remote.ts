// What the fleet's git-only tests share: temp directories removed after each test, git with a fixed
// identity, a bare remote with one commit, and the run's git lock as one process sees it.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach } from 'vitest';

/** Temp directories under `prefix`, each removed after the test that made it. */
export function tempDirs(prefix: string): (p: string) => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
  return (p) => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-${p}-`));
    dirs.push(d);
    return d;
  };
}

export const sh = (cwd: string, ...a: string[]): string => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...a], { cwd, encoding: 'utf8' }).trim();

/** A bare remote holding one commit (README.md) on main. */
export function bareRemote(tmp: (p: string) => string): { url: string; base: string } {
  const src = tmp('src');
  sh(src, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(src, 'README.md'), 'app\n');
  sh(src, 'add', '-A');
  sh(src, 'commit', '-qm', 'base');
  const url = path.join(tmp('remote'), 'app.git');
  sh(src, 'clone', '-q', '--bare', src, url);
  return { url, base: sh(src, 'rev-parse', 'HEAD') };
}

/** One merge at a time, as the database's advisory lock allows per run. */
export function serialLock(): <T>(fn: () => Promise<T>) => Promise<T> {
  let chain: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const next = chain.then(fn);
    chain = next.catch(() => undefined);
    return next;
  };
}
