// What a sandboxed command sees of the user's home: an empty, private HOME at the home's own path (so a
// path a tool baked in, such as Yarn PnP's `../../home/u/.yarn/berry/cache/...`, still resolves), with
// only the package managers' and interpreters' own directories bound back read-only: corepack's cache
// and the versions it pinned, pnpm's store and home, Yarn Berry's global cache, a Bun, pyenv, nvm or
// Volta install, and the tools on PATH that live under a hidden directory (a global pnpm in ~/.local,
// a Bun in ~/.bun, a prefix under /tmp). Package managers' rc files are bound as copies without
// credentials. Keys, tokens and the rest of the home stay hidden (core/contain/home-entry.ts).
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { checkHomeEntry } from '../contain/home-entry.js';
import { isDir } from './deps.js';
import { isWithin } from './path-guard.js';
import type { Mount } from './task-view.js';

/** HOME when the user's own cannot be shown privately (it is `/`, or not a directory). */
export const FALLBACK_HOME = '/tmp/acia-home';

/** Tool state a command may need, by the variable that moves it and its place under HOME. */
const TOOL_DIRS: ReadonlyArray<{ env?: string; under: string }> = [
  { env: 'COREPACK_HOME', under: '.cache/node/corepack' },
  { env: 'PNPM_HOME', under: '.local/share/pnpm' },
  { under: '.cache/pnpm' },
  { under: '.yarn/berry' },
  { env: 'BUN_INSTALL', under: '.bun' },
  { env: 'PYENV_ROOT', under: '.pyenv' },
  { env: 'NVM_DIR', under: '.nvm' },
  { env: 'VOLTA_HOME', under: '.volta' },
  { under: '.local/share/pypoetry' },
];

/** Programs looked up on PATH that a test command may run. */
const TOOL_NAMES = new Set(['node', 'npm', 'npx', 'corepack', 'pnpm', 'pnpx', 'yarn', 'yarnpkg', 'bun', 'bunx', 'python', 'python3', 'pip', 'pip3', 'poetry', 'uv', 'pytest', 'tox', 'deno']);

/** rc files package managers read from HOME (their registries, pip's index); bound as copies with credentials removed. */
const RC_FILES = ['.npmrc', '.yarnrc', '.yarnrc.yml', '.config/pnpm/rc', '.config/pip/pip.conf', '.pip/pip.conf'];

/**
 * A setting that carries a credential, in .npmrc (`//host/:_authToken=`), .yarnrc.yml (`npmAuthToken:`)
 * or pip.conf (`index-url = https://user:token@host/simple`, `client-cert =`) form.
 */
const CREDENTIAL_LINE = /(^\s*\/\/)|:\/\/[^\s/]*@|_auth|authtoken|authident|password|passwd|token|secret|username|email|certfile|keyfile|client-cert|^\s*(cert|key|ca)\s*[=:]/i;

export interface HomeView {
  /** HOME inside the sandbox. */
  home: string;
  mounts: Mount[];
  /** Variables that point tools at what is bound (their values are paths). */
  env: Record<string, string>;
}

export interface HomeViewOptions {
  parentEnv: NodeJS.ProcessEnv;
  /** More tool directories to show when hidden (a virtualenv's base interpreter, an outside VIRTUAL_ENV). */
  extraTools?: readonly string[];
  /** Directories hidden behind a mask (homes, /run, ...), plus /tmp, whose private copy hides the host's. */
  hidden: readonly string[];
  /** Checkouts hidden from the command: never uncovered by a tool bind. */
  checkouts: readonly string[];
  /** Stores a generated file (a sanitised rc copy) and returns its host path. */
  writeFile: (name: string, text: string) => string;
}

export function homeView(o: HomeViewOptions): HomeView {
  const realHome = real(o.parentEnv.HOME);
  const home = realHome !== null && o.hidden.some((h) => isWithin(h, realHome)) && isDir(realHome) ? realHome : FALLBACK_HOME;
  const mounts: Mount[] = [{ op: 'dir', dest: home }];
  const env: Record<string, string> = {};
  const bound: string[] = [];
  const hiddenRoot = (p: string): string | null => o.hidden.filter((h) => isWithin(h, p)).sort((a, b) => b.length - a.length)[0] ?? null;
  const bind = (path: string): boolean => {
    if (bound.some((b) => isWithin(b, path))) return true;
    const root = hiddenRoot(path);
    if (root === null) return true; // visible anyway on the read-only root
    if (!checkHomeEntry(path, realHome ?? root, o.checkouts).ok) return false;
    bound.push(path);
    mounts.push({ op: 'ro-bind', src: path, dest: path });
    return true;
  };

  for (const t of TOOL_DIRS) {
    const set = t.env !== undefined ? o.parentEnv[t.env] : undefined;
    const dir = real(set ?? (realHome === null ? undefined : nodePath.join(realHome, t.under)));
    if (dir === null || !isDir(dir)) continue;
    if (bind(dir) && t.env !== undefined && set !== undefined) env[t.env] = dir;
  }
  for (const dir of o.extraTools ?? []) {
    const r = real(dir);
    if (r !== null && isDir(r)) bind(r);
  }
  // Tools on PATH that a mask hides: the link itself (often relative, into a package) and what it runs.
  for (const entry of (o.parentEnv.PATH ?? '').split(':')) {
    const dir = real(entry);
    if (dir === null || hiddenRoot(dir) === null || !isDir(dir)) continue;
    for (const name of safeReaddir(dir)) {
      if (!TOOL_NAMES.has(name)) continue;
      const at = nodePath.join(dir, name);
      const target = real(at);
      if (target === null) continue;
      const lst = fs.lstatSync(at);
      if (lst.isSymbolicLink()) {
        if (!bind(packageRootOf(target, hiddenRoot(target)))) continue;
        if (!bound.some((b) => isWithin(b, at))) mounts.push({ op: 'symlink', target: fs.readlinkSync(at), dest: at });
      } else if (lst.isFile()) {
        bind(at);
      }
    }
  }
  if (realHome !== null && home === realHome) {
    for (const rc of RC_FILES) {
      const p = nodePath.join(realHome, rc);
      const text = readSmallFile(p);
      if (text === null) continue;
      const kept = text.split('\n').filter((l) => !CREDENTIAL_LINE.test(l));
      mounts.push({ op: 'ro-bind', src: o.writeFile(`rc-${rc.replace(/\//g, '_')}`, kept.join('\n')), dest: p });
    }
  }
  return { home, mounts, env };
}

/**
 * The directory a tool runs from: the nearest package root above its file (a node tool needs its whole
 * package), or the file alone when there is none below the hidden root.
 */
function packageRootOf(file: string, stopAt: string | null): string {
  for (let d = nodePath.dirname(file); stopAt !== null && isWithin(stopAt, d) && d !== stopAt; d = nodePath.dirname(d)) {
    if (fs.existsSync(nodePath.join(d, 'package.json'))) return d;
  }
  return file;
}

function real(p: string | undefined): string | null {
  if (p === undefined || p === '') return null;
  try {
    return fs.realpathSync(nodePath.resolve(p));
  } catch {
    return null;
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/** A regular file up to 64 KiB (dotfiles are often links into a dotfiles repository; a FIFO must not hang us). */
function readSmallFile(p: string): string | null {
  try {
    const st = fs.statSync(p);
    if (!st.isFile() || st.size > 64 * 1024) return null;
    return fs.readFileSync(p, 'utf8');
  } catch {
    return null;
  }
}
