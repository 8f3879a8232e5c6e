// Workspace trust: a file the repository ships (`.acia/config.json`, `.mcp.json`) may only pick the model,
// its endpoint, the sandbox, hosts, prices, budget, commands or MCP servers after the user has trusted that
// exact content. `acia trust` records the file's sha256 in the user's own state directory (never in the
// checkout), keyed by the file's absolute path; any change to the file needs trust again (as direnv does).
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { mkdirSync, realpathSync } from 'node:fs';
import { AciaError, errorMessage } from '../errors.js';
import { readRegularFile, writeRegularFile } from '../contain/no-follow.js';

/** The repository files that can configure ACIA, relative to the repo root. */
export const REPO_TRUST_FILES = ['.acia/config.json', '.mcp.json'] as const;

interface TrustRecord {
  sha256: string;
  trustedAt: string;
}

interface TrustStore {
  version: 1;
  files: Record<string, TrustRecord>;
}

/** `$XDG_STATE_HOME/acia`, or `~/.local/state/acia`: ACIA's per-user state, outside any checkout. */
export function userStateDir(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_STATE_HOME;
  const base = xdg !== undefined && xdg !== '' && xdg.startsWith('/') ? xdg : join(env.HOME ?? homedir(), '.local', 'state');
  return join(base, 'acia');
}

export function trustStorePath(env: NodeJS.ProcessEnv): string {
  return join(userStateDir(env), 'trust.json');
}

/** The key a file is trusted under: its absolute path with the directory's symlinks resolved. */
function keyOf(file: string): string {
  const abs = resolve(file);
  try {
    return join(realpathSync(dirname(abs)), abs.slice(dirname(abs).length + 1));
  } catch {
    return abs;
  }
}

/**
 * A file the repository ships, read without following a link (a `.mcp.json` pointing at /proc/self/environ
 * is refused, not read). `repoRoot` bounds the directory check. Null when the file does not exist.
 */
export function readRepoFile(repoRoot: string, file: string): Buffer | null {
  return readRegularFile(repoRoot, resolve(repoRoot, file));
}

function loadStore(env: NodeJS.ProcessEnv): TrustStore {
  const path = trustStorePath(env);
  let buf: Buffer | null;
  try {
    buf = readRegularFile(dirname(path), path);
  } catch (e) {
    throw new AciaError('CONFIG_INVALID', `cannot read the trust store ${path}: ${errorMessage(e)}`);
  }
  if (buf === null) return { version: 1, files: {} };
  try {
    const v = JSON.parse(buf.toString('utf8')) as TrustStore;
    if (v.version !== 1 || typeof v.files !== 'object' || v.files === null) throw new Error('unexpected shape');
    return v;
  } catch (e) {
    throw new AciaError('CONFIG_INVALID', `the trust store ${path} is damaged: ${errorMessage(e)}`, { hint: `delete it and trust your repositories again with \`acia trust\`` });
  }
}

function saveStore(env: NodeJS.ProcessEnv, store: TrustStore): void {
  const path = trustStorePath(env);
  const dir = dirname(path);
  // The user's own directory: links above it (a symlinked $HOME) are the user's business.
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeRegularFile(dir, path, `${JSON.stringify(store, null, 2)}\n`);
}

export function sha256Of(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

export type TrustState = 'absent' | 'trusted' | 'untrusted' | 'changed';

/**
 * Whether a repository file's current content is trusted: `trusted` when the user ran `acia trust` on exactly
 * these bytes, `changed` when they trusted an earlier version, `untrusted` when never, `absent` when there
 * is no such file. This is the one check every repository-defined setting goes through (config keys, MCP
 * servers): use the content it was given, so what is checked is what is used.
 */
export function trustStateOf(file: string, content: Buffer | null, env: NodeJS.ProcessEnv): TrustState {
  if (content === null) return 'absent';
  const rec = loadStore(env).files[keyOf(file)];
  if (!rec) return 'untrusted';
  return rec.sha256 === sha256Of(content) ? 'trusted' : 'changed';
}

/** Convenience: reads `file` (no links) under `repoRoot` and says whether its current content is trusted. */
export function isRepoFileTrusted(repoRoot: string, file: string, env: NodeJS.ProcessEnv): boolean {
  const abs = resolve(repoRoot, file);
  return trustStateOf(abs, readRepoFile(repoRoot, abs), env) === 'trusted';
}

/** Records the current content of each existing file as trusted; returns what was recorded. */
export function trustRepoFiles(repoRoot: string, env: NodeJS.ProcessEnv, files: readonly string[] = REPO_TRUST_FILES, now: Date = new Date()): { file: string; sha256: string }[] {
  const store = loadStore(env);
  const done: { file: string; sha256: string }[] = [];
  for (const rel of files) {
    const abs = resolve(repoRoot, rel);
    const content = readRepoFile(repoRoot, abs);
    if (content === null) continue;
    const sha256 = sha256Of(content);
    store.files[keyOf(abs)] = { sha256, trustedAt: now.toISOString() };
    done.push({ file: abs, sha256 });
  }
  if (done.length > 0) saveStore(env, store);
  return done;
}

/** Forgets trust for the repository's files; returns the ones that were trusted. */
export function revokeRepoFiles(repoRoot: string, env: NodeJS.ProcessEnv, files: readonly string[] = REPO_TRUST_FILES): string[] {
  const store = loadStore(env);
  const gone: string[] = [];
  for (const rel of files) {
    const key = keyOf(resolve(repoRoot, rel));
    if (store.files[key]) {
      delete store.files[key];
      gone.push(key);
    }
  }
  if (gone.length > 0) saveStore(env, store);
  return gone;
}
