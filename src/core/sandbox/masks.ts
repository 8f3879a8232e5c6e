// What a sandboxed command must not see on a read-only root: homes (by real path), the user's checkout and
// any checkout that owns the repository's git dir, and the credentials git config files hold.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as nodePath from 'node:path';
import type { GitPaths } from './git-paths.js';
import { isWithin } from './path-guard.js';
import { checkoutOfWorktree } from '../contain/acia-state.js';

/** Directories never worth hiding wholesale: masking them would break the sandbox, not protect anything. */
const NEVER_MASK = new Set(['/', '/usr', '/bin', '/sbin', '/lib', '/lib64', '/etc', '/opt', '/var', '/tmp', '/proc', '/dev', '/sys']);

function real(p: string): string | null {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
}

/**
 * Homes and runtime dirs hidden behind empty tmpfs: the user's secrets and sockets (docker, ssh-agent).
 * Masked by real path, so a HOME that is a symlink (or lives under one) is hidden where its files are.
 */
export function maskedDirs(parentEnv: NodeJS.ProcessEnv): string[] {
  const wanted = ['/root', '/home', '/run', '/var/run', '/mnt', '/media'];
  if (parentEnv.HOME) wanted.push(nodePath.resolve(parentEnv.HOME));
  try {
    wanted.push(os.userInfo().homedir); // the passwd home, whatever HOME says
  } catch {
    /* no passwd entry */
  }
  const dirs = new Set<string>();
  for (const d of wanted) {
    const r = real(d);
    if (r !== null && !NEVER_MASK.has(r) && fs.statSync(r).isDirectory()) dirs.add(r);
  }
  // Parents before children so a later mask is not hidden by an earlier one.
  return [...dirs].sort((x, y) => x.length - y.length);
}

/** The checkout that holds `root` as a nested linked worktree, or null when `root` is the checkout itself. */
export function enclosingCheckout(root: string, commonDir: string | null): string | null {
  if (commonDir === null || nodePath.basename(commonDir) !== '.git') return null;
  const checkout = nodePath.dirname(commonDir);
  return root !== checkout && isWithin(checkout, root) ? checkout : null;
}

/**
 * Every checkout to hide from a command in `root`: the user's checkout holding `.acia/worktrees` (even
 * when it is itself a linked worktree or a submodule checkout), the work tree that owns the common git
 * dir (`repo/.git`, or the superproject of `super/.git/modules/sub`), never `root` or anything inside it.
 */
export function checkoutsToMask(root: string, git: GitPaths): string[] {
  const out = new Set<string>();
  const holder = checkoutOfWorktree(root);
  if (holder !== null) out.add(holder);
  for (const dir of [git.commonDir, git.gitDir]) {
    if (dir === null) continue;
    // The first ancestor named .git: its parent is a work tree (the main checkout, or the superproject).
    for (let p = dir; p !== nodePath.dirname(p); p = nodePath.dirname(p)) {
      if (nodePath.basename(p) === '.git') {
        out.add(nodePath.dirname(p));
        break;
      }
    }
  }
  return [...out].filter((c) => !NEVER_MASK.has(c) && c !== root && !isWithin(root, c)).sort((x, y) => x.length - y.length);
}

/** Config keys in-sandbox git needs to read the repository; everything else (remotes, extraheader) stays out. */
const KEEP_KEY = /^(core\.(repositoryformatversion|bare|filemode|symlinks|ignorecase|precomposeunicode|logallrefupdates)|extensions\.[a-z0-9]+)$/;

/**
 * Bind pairs [source, dest] that replace every git config file a command could read (the common config,
 * worktree configs, submodule configs) with a sanitised copy holding only the keys above: a token in a
 * remote URL or an `http.extraheader` never enters the sandbox.
 */
export function sanitisedGitConfigBinds(git: GitPaths, scratchDir: string): [string, string][] {
  if (git.commonDir === null) return [];
  const binds: [string, string][] = [];
  const configs = new Set<string>();
  const add = (p: string): void => {
    try {
      if (fs.lstatSync(p).isFile()) configs.add(p);
    } catch {
      /* absent */
    }
  };
  add(nodePath.join(git.commonDir, 'config'));
  add(nodePath.join(git.commonDir, 'config.worktree'));
  if (git.gitDir !== null) add(nodePath.join(git.gitDir, 'config.worktree'));
  for (const sub of ['worktrees', 'modules']) collectConfigs(nodePath.join(git.commonDir, sub), add, 4);
  for (const file of configs) {
    const out = nodePath.join(scratchDir, `config-${binds.length}`);
    fs.writeFileSync(out, sanitise(file), { mode: 0o644 });
    binds.push([out, file]);
  }
  return binds;
}

function collectConfigs(dir: string, add: (p: string) => void, depth: number): void {
  if (depth === 0) return;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const p = nodePath.join(dir, e.name);
    if (e.isDirectory()) {
      if (!['objects', 'refs', 'logs', 'hooks', 'info'].includes(e.name)) collectConfigs(p, add, depth - 1);
    } else if (e.name === 'config' || e.name === 'config.worktree') add(p);
  }
}

function sanitise(file: string): string {
  const r = spawnSync('git', ['config', '--file', file, '--no-includes', '--list', '-z'], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: '/nonexistent' },
    timeout: 10_000,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const sections = new Map<string, string[]>();
  for (const rec of (r.stdout ?? '').split('\0')) {
    const nl = rec.indexOf('\n');
    const key = (nl < 0 ? rec : rec.slice(0, nl)).toLowerCase();
    const value = nl < 0 ? 'true' : rec.slice(nl + 1);
    if (!KEEP_KEY.test(key) || !/^[A-Za-z0-9._-]*$/.test(value)) continue;
    const dot = key.indexOf('.');
    const section = key.slice(0, dot);
    const lines = sections.get(section) ?? [];
    lines.push(`\t${key.slice(dot + 1)} = ${value}`);
    sections.set(section, lines);
  }
  return [...sections].map(([s, lines]) => `[${s}]\n${lines.join('\n')}\n`).join('');
}
