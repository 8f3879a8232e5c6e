// The user's home for the real-project matrix: package managers installed the way their users install
// them, kept between test runs under the test cache. pnpm and Yarn come from corepack (Node 20 ships it):
// `corepack enable` puts their shims in ~/.local/bin, and the versions the projects pin land in corepack's
// cache in ~/.cache/node/corepack. Bun is installed from its npm package into ~/.bun. The projects' own
// installs add pnpm's store (~/.local/share/pnpm) and Yarn Berry's global cache (~/.yarn/berry/cache).
//
// This registry serves packages without npm's signatures, so corepack's signature check is turned off
// (COREPACK_INTEGRITY_KEYS=0) and Yarn 2+ is fetched from the npm registry (COREPACK_NPM_REGISTRY)
// rather than its own CDN, which is unreachable here. Only the installs need that; the sandboxed runs
// find everything in the cache, offline.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CACHE, shAsync } from './harness.js';

export const PINNED = { pnpm: '9.15.9', yarnClassic: '1.22.22', yarnBerry: '4.5.3', bun: '1.4.5' } as const;

export interface ToolHome {
  home: string;
  /** HOME and PATH for the user's shell (and ACIA): the shims and Bun first on PATH. */
  env: Record<string, string>;
  /** What the installs need on top (registry settings for corepack). */
  installEnv: Record<string, string>;
}

let made: Promise<ToolHome> | null = null;

/** The home, made once per cache (a fixed path: Yarn PnP files name the global cache relative to the project). */
export function toolHome(): Promise<ToolHome> {
  made ??= makeHome();
  return made;
}

async function makeHome(): Promise<ToolHome> {
  const home = join(CACHE, 'home-v1');
  const env = {
    HOME: home,
    PATH: `${join(home, '.local', 'bin')}:${join(home, '.bun', 'bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
  };
  const registry = process.env.npm_config_registry ?? 'https://registry.npmjs.org';
  const installEnv = { ...env, COREPACK_INTEGRITY_KEYS: '0', COREPACK_NPM_REGISTRY: registry.replace(/\/$/, '') };
  if (!existsSync(join(home, '.complete'))) {
    rmSync(home, { recursive: true, force: true });
    mkdirSync(join(home, '.local', 'bin'), { recursive: true });
    const run = (cmd: string, args: string[]) => shAsync(cmd, args, home, { ...process.env, ...installEnv });
    await run('corepack', ['enable', '--install-directory', join(home, '.local', 'bin'), 'pnpm', 'yarn']);
    // What `corepack install` does for a project's pin, for each pin the projects carry.
    for (const spec of [`pnpm@${PINNED.pnpm}`, `yarn@${PINNED.yarnClassic}`, `yarn@${PINNED.yarnBerry}`]) await run('corepack', [spec, '--version']);
    await run('npm', ['install', '--global', '--prefix', join(home, '.bun'), '--no-audit', '--no-fund', `--cache=${join(CACHE, 'npm')}`, `bun@${PINNED.bun}`]);
    writeFileSync(join(home, '.complete'), '');
  }
  return { home, env, installEnv };
}
