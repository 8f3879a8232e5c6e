// Loads the effective config: defaults, then the user file (XDG), the repo's .acia/config.json,
// ACIA_* environment variables, the settings a continued run recorded, and flags, each layer
// validated; every value remembers its source.
// The repository's file is written by whoever wrote the repository: until the user trusts its exact
// content (`acia trust`), only keys that cannot weaken isolation or spend money are taken from it.
import { repoConfigPath } from '../contain/acia-state.js';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { z } from 'zod';
import { AciaError } from '../errors.js';
import { Config } from './schema.js';
import { markHooks } from '../hooks/config.js';
import { readRepoFile, trustStateOf, type TrustState } from './trust.js';

/** `default`, `flag`, `env:NAME`, or the path of the file a value came from. */
export type ConfigSource = string;

export interface LoadedConfig {
  config: Config;
  /** Top-level key -> where its value came from (a file path, `env:NAME`, `flag`, `default`). */
  sources: Record<string, ConfigSource>;
  files: string[];
  /** Keys the repository's config file set but that were not applied, because the file is not trusted. */
  ignored: IgnoredRepoKeys | null;
}

export interface IgnoredRepoKeys {
  file: string;
  keys: string[];
  state: Exclude<TrustState, 'absent' | 'trusted'>;
}

/**
 * What an untrusted repository file may set: limits that only narrow what the team does or how much of it
 * runs at once. Everything else (model, endpoints, sandbox, hosts, prices, budget, test command, and any
 * key added later, such as MCP servers) needs the user's trust: an allowlist, so a new key is gated by default.
 */
export const UNTRUSTED_REPO_KEYS: ReadonlySet<string> = new Set(['protectedPaths', 'maxIterations', 'parallel', 'commandTimeoutS', 'maxTokensPerCall', 'memoryLessons', 'approvePlan']);

/** One line saying which keys were ignored and how to apply them. */
export function describeIgnored(ig: IgnoredRepoKeys): string {
  const why = ig.state === 'changed' ? 'changed since you trusted it' : 'not trusted';
  return `ignored ${ig.keys.map((k) => `"${k}"`).join(', ')} from ${ig.file}: the file is ${why}; review it, then run \`acia trust\` to apply them`;
}

/** What a run recorded it ran with (its latest session): `acia resume`, replay and a fleet takeover go on with it. */
export interface RecordedSettings {
  runId: string;
  model: string;
  parallel: number;
  maxIterations: number;
  budget: Config['budget'];
  memoryLessons?: boolean | undefined;
  /** The models given per role, carried on like `model`. */
  roleModels?: Record<string, string> | undefined;
}

/**
 * The config values a run's recorded settings set. Never the sandbox: that is what the user's config and
 * flags say now, so no ledger can turn it off.
 */
export function recordedLayer(r: RecordedSettings): Partial<Config> {
  return { model: r.model, parallel: r.parallel, maxIterations: r.maxIterations, budget: r.budget, ...(r.memoryLessons === undefined ? {} : { memoryLessons: r.memoryLessons }), ...(r.roleModels === undefined ? {} : { roleModels: r.roleModels }) };
}

export interface LoadConfigOptions {
  repo: string | null;
  env: NodeJS.ProcessEnv;
  flags: Partial<Record<keyof Config, unknown>>;
  /**
   * The settings of the run being continued: a layer over the files and the environment, under the flags
   * (a flag given now overrides one recorded value; a budget flag overrides that limit only).
   */
  recorded?: RecordedSettings | null;
  /** Override for tests; defaults to $XDG_CONFIG_HOME/acia/config.json or ~/.config/acia/config.json. */
  userFile?: string | null;
}

const ENV_KEYS: Record<string, { key: keyof Config; parse: (v: string) => unknown }> = {
  ACIA_MODEL: { key: 'model', parse: (v) => v },
  ACIA_PARALLEL: { key: 'parallel', parse: Number },
  ACIA_MAX_ITERATIONS: { key: 'maxIterations', parse: Number },
  ACIA_SANDBOX: { key: 'sandbox', parse: (v) => v },
  ACIA_TEST_COMMAND: { key: 'testCommand', parse: (v) => v },
  ACIA_SETUP: { key: 'setup', parse: (v) => v },
  OPENAI_BASE_URL: { key: 'openaiBaseUrl', parse: (v) => v },
  ANTHROPIC_BASE_URL: { key: 'anthropicBaseUrl', parse: (v) => v },
};

const Partial = Config.partial();

export function userConfigPath(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : join(env.HOME ?? homedir(), '.config');
  return join(base, 'acia', 'config.json');
}

export function loadConfig(opts: LoadConfigOptions): LoadedConfig {
  const merged: Record<string, unknown> = {};
  const sources: Record<string, ConfigSource> = {};
  const files: string[] = [];
  const layer = (values: Record<string, unknown>, source: (key: string) => ConfigSource, where: string, userFile = false) => {
    const parsed = Partial.safeParse(values);
    if (!parsed.success) throw configError(parsed.error, where);
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) continue;
      if (k === 'hooks') {
        // Every file's hooks run (the user's first), each marked with where it came from.
        merged.hooks = [...((merged.hooks as unknown[] | undefined) ?? []), ...markHooks(v, where, userFile)];
        sources.hooks = sources.hooks === undefined ? source(k) : `${sources.hooks}, ${source(k)}`;
        continue;
      }
      merged[k] = k === 'budget' && typeof v === 'object' && v !== null ? { ...(merged.budget as object | undefined), ...v } : v;
      sources[k] = source(k);
    }
  };

  const userFile = opts.userFile === undefined ? userConfigPath(opts.env) : opts.userFile;
  if (userFile !== null) {
    const v = readJsonFile(userFile);
    if (v !== undefined) {
      files.push(userFile);
      layer(v, () => userFile, userFile, true);
    }
  }
  let ignored: IgnoredRepoKeys | null = null;
  if (opts.repo !== null) {
    const repoFile = repoConfigPath(opts.repo);
    const bytes = readRepoFile(opts.repo, repoFile);
    if (bytes !== null) {
      const v = parseJsonObject(bytes.toString('utf8'), repoFile);
      if ('mcpServers' in v) {
        // A server runs a program of its choosing, with a sandbox opt-out: never the repository's call here.
        throw new AciaError('CONFIG_INVALID', `"mcpServers" is not allowed in ${repoFile}`, {
          hint: 'define MCP servers in your user config, or in the repository\'s .mcp.json (used only once you trust it)',
        });
      }
      if ('mcpEnvAllow' in v) {
        // Which of your variables a repository's servers receive is yours to say, never the repository's.
        throw new AciaError('CONFIG_INVALID', `"mcpEnvAllow" is not allowed in ${repoFile}`, { hint: 'list the variables in your user config (acia config shows where it is)' });
      }
      // Refused whether trusted or not, as mcpServers is: leaving the sandbox is never the repository's call.
      markHooks(v.hooks, repoFile, false);
      files.push(repoFile);
      const state = trustStateOf(repoFile, bytes, opts.env);
      if (state === 'trusted') {
        layer(v, () => repoFile, repoFile);
      } else {
        // Validated whole, so a typo is still reported; applied only in part.
        const parsed = Partial.safeParse(v);
        if (!parsed.success) throw configError(parsed.error, repoFile);
        const gated = Object.keys(v).filter((k) => !UNTRUSTED_REPO_KEYS.has(k) && v[k] !== undefined);
        layer(Object.fromEntries(Object.entries(v).filter(([k]) => UNTRUSTED_REPO_KEYS.has(k))), () => repoFile, repoFile);
        if (gated.length > 0) ignored = { file: repoFile, keys: gated, state: state === 'changed' ? 'changed' : 'untrusted' };
      }
    }
  }
  // One layer per variable and per flag, so an error names the variable or flag to fix.
  for (const [name, { key, parse }] of Object.entries(ENV_KEYS)) {
    const raw = opts.env[name];
    if (raw === undefined || raw === '') continue;
    layer({ [key]: parse(raw) }, () => `env:${name}`, `$${name}`);
  }
  if (opts.recorded) layer(recordedLayer(opts.recorded), () => `run:${opts.recorded!.runId}`, `the settings run ${opts.recorded.runId} recorded`);
  for (const [k, v] of Object.entries(opts.flags)) {
    if (v === undefined) continue;
    layer({ [k]: v }, () => 'flag', k === 'budget' ? 'the command line' : `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
  }

  const full = Config.safeParse(merged);
  if (!full.success) throw configError(full.error, 'the merged configuration');
  for (const k of Object.keys(full.data)) sources[k] ??= 'default';
  return { config: full.data, sources, files, ignored };
}

function readJsonFile(path: string): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new AciaError('CONFIG_INVALID', `cannot read ${path}: ${(e as Error).message}`);
  }
  return parseJsonObject(text, path);
}

function parseJsonObject(text: string, path: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new AciaError('CONFIG_INVALID', `${path} is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AciaError('CONFIG_INVALID', `${path} must hold a JSON object`);
  }
  return value as Record<string, unknown>;
}

function configError(error: z.ZodError, where: string): AciaError {
  const first = error.issues[0];
  if (!first) return new AciaError('CONFIG_INVALID', `invalid configuration in ${where}`);
  const key = first.path.join('.');
  const msg =
    first.code === 'unrecognized_keys'
      ? `unknown key${first.keys.length > 1 ? 's' : ''} ${first.keys.map((k) => `"${[...first.path, k].join('.')}"`).join(', ')} in ${where}`
      : `invalid value for "${key}" in ${where}: ${first.message}`;
  return new AciaError('CONFIG_INVALID', msg, { hint: 'see `acia config` for the keys and their current values' });
}
