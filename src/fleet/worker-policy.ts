// A worker's own policy over what submitters ask of it. Anyone who can submit a run chooses its settings,
// its repository and its base; the worker runs them with its own credentials, on its own disk. So the
// submitted settings are an allowlist (anything else refuses the run), the sandbox stays on unless the
// worker's config lets it go, a scripted model's file must lie under a directory the worker names,
// budgets are capped by the worker's limits, and the repository must match one of the worker's
// `fleetWorker.repos` entries (scheme, host, port and path prefix, after normalising the URL).
import { realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { z } from 'zod';
import { isRunId } from '../core/contain/run-id.js';
import { AciaError } from '../core/errors.js';
import { ModelSpec, type Config } from '../core/config/schema.js';

export type WorkerPolicy = Config['fleetWorker'];

/** What a submitter may set: what `acia submit` sends. Anything else refuses the run. */
const SubmittedSettings = z.strictObject({
  model: ModelSpec.optional(),
  parallel: z.number().int().min(1).max(32).optional(),
  maxIterations: z.number().int().min(0).max(50).optional(),
  budget: z.strictObject({ maxCostUsd: z.number().positive().optional(), maxTokens: z.number().int().positive().optional() }).optional(),
  testCommand: z.string().min(1).optional(),
  sandbox: z.enum(['auto', 'bwrap', 'off']).optional(),
  // Only ever makes the run wait for its submitter's answer after planning.
  approvePlan: z.literal(true).optional(),
});

function refuse(what: string, hint: string): AciaError {
  return new AciaError('FLEET_POLICY', `refused by the worker's policy: ${what}`, { hint });
}

/**
 * The settings a run gets on this worker: the submitted ones as far as the policy allows, with the
 * worker's budget caps applied. Throws FLEET_POLICY naming what was refused.
 */
export function applyWorkerPolicy(policy: WorkerPolicy, submitted: unknown): Record<string, unknown> {
  const parsed = SubmittedSettings.safeParse(submitted ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = issue?.code === 'unrecognized_keys' ? issue.keys.join(', ') : (issue?.path.join('.') ?? '?');
    throw refuse(`a submitter may not set "${key}" (${issue?.message ?? 'invalid'})`, 'a submitter chooses the model, parallel, maxIterations, budget, testCommand, sandbox and approvePlan; the rest is the worker’s config');
  }
  const s = parsed.data;
  if (s.sandbox === 'off' && !policy.allowSandboxOff) throw refuse('--sandbox off (the run’s commands would run on this worker unsandboxed)', 'set fleetWorker.allowSandboxOff in the worker’s own config to allow it');
  if (s.model !== undefined && /^(scripted|chaos):/.test(s.model)) checkScript(policy, s.model);
  const capped = (asked: number | undefined, cap: number | undefined) => (cap === undefined ? asked : Math.min(asked ?? cap, cap));
  const maxCostUsd = capped(s.budget?.maxCostUsd, policy.maxCostUsd);
  const maxTokens = capped(s.budget?.maxTokens, policy.maxTokens);
  const budget = { ...(maxCostUsd === undefined ? {} : { maxCostUsd }), ...(maxTokens === undefined ? {} : { maxTokens }) };
  return { ...s, ...(Object.keys(budget).length === 0 ? {} : { budget }) };
}

/**
 * Everything a job asks of this worker, checked before it touches anything: the repository, the base and
 * the settings. Returns the settings the run gets; throws FLEET_POLICY.
 */
export function admitJob(policy: WorkerPolicy, job: { runId: string; repoUrl: string; base: string; settings: unknown }): Record<string, unknown> {
  // The id names the run's directories on this worker (core/contain's one pattern).
  if (!isRunId(job.runId)) throw refuse(`the run id ${JSON.stringify(job.runId)} is not a plain name`, 'run ids are made by acia submit');
  checkRepoUrl(policy, job.repoUrl);
  checkBase(job.base);
  return applyWorkerPolicy(policy, job.settings);
}

/** A scripted model reads a file on this worker's disk: only under a directory the worker names. */
function checkScript(policy: WorkerPolicy, model: string): void {
  const spec = model.slice(model.indexOf(':') + 1);
  const file = model.startsWith('chaos:') ? (spec.split(',')[0] ?? '') : spec;
  const real = realOrResolved(file);
  if (!isAbsolute(file) || !policy.scriptedModelDirs.some((d) => within(real, realOrResolved(d)))) {
    throw refuse(`the scripted model file ${JSON.stringify(file)} is not under a directory in fleetWorker.scriptedModelDirs`, 'list the directory holding the scripts in the worker’s own config (fleetWorker.scriptedModelDirs)');
  }
}

/** Control characters (a newline would end a git config value or a protocol line). */
function hasControl(s: string): boolean {
  return [...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
}

/** A base is a commit or a branch: never something git could read as an option. */
export function checkBase(base: string): void {
  if (base === '' || base.startsWith('-') || /\s/.test(base) || hasControl(base)) throw refuse(`the base ${JSON.stringify(base)} is not a commit or branch name`, 'submit with --base <commit or branch>');
}

interface Remote {
  scheme: string;
  host: string;
  port: string;
  path: string;
}

const SCHEMES = new Set(['https', 'http', 'ssh', 'git', 'file']);

/**
 * A repository URL as git would read it: `scheme://...`, an scp-like `user@host:path` (ssh) or an
 * absolute path (file). Null for anything else: relative paths, `ext::`/`fd::` transports, option-like
 * or multi-line strings.
 */
export function parseRemote(url: string): Remote | null {
  if (url === '' || url.startsWith('-') || hasControl(url)) return null;
  if (url.startsWith('/')) return { scheme: 'file', host: '', port: '', path: realOrResolved(url) };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return null;
    }
    const scheme = u.protocol.slice(0, -1).toLowerCase();
    if (!SCHEMES.has(scheme)) return null;
    let path: string;
    try {
      path = decodeURIComponent(u.pathname);
    } catch {
      return null;
    }
    if (scheme === 'file') {
      if (u.hostname !== '' && u.hostname !== 'localhost') return null;
      return { scheme, host: '', port: '', path: realOrResolved(path) };
    }
    return { scheme, host: u.hostname.toLowerCase(), port: u.port, path: normalisePath(path) };
  }
  // git's scp-like syntax: no slash before the first colon.
  const scp = /^(?:[^@/:]+@)?([^@/:[\]]+|\[[^\]]+\]):(.*)$/.exec(url);
  if (scp) return { scheme: 'ssh', host: (scp[1] ?? '').toLowerCase(), port: '', path: normalisePath(`/${scp[2] ?? ''}`) };
  return null;
}

/** Whether the worker may clone from and push to `url`; throws FLEET_POLICY when not. */
export function checkRepoUrl(policy: WorkerPolicy, url: string): void {
  const hint = 'the worker serves the repositories its own config lists in fleetWorker.repos (e.g. "https://github.com/acme", "file:///srv/git")';
  const remote = parseRemote(url);
  if (!remote) throw refuse(`${JSON.stringify(url)} is not a repository URL this worker accepts (https, http, ssh, git or file, or an absolute path)`, hint);
  if (!policy.repos.some((entry) => matches(parseRemote(entry), remote))) throw refuse(`${JSON.stringify(url)} is not under any of the worker's fleetWorker.repos`, hint);
}

/** Whether a `fleetWorker.repos` entry parses (config validation). */
export function isRepoRule(entry: string): boolean {
  return parseRemote(entry) !== null;
}

function matches(rule: Remote | null, r: Remote): boolean {
  if (!rule || rule.scheme !== r.scheme || rule.host !== r.host || rule.port !== r.port) return false;
  const prefix = rule.path.replace(/\/+$/, '');
  return prefix === '' || r.path === prefix || r.path.startsWith(`${prefix}/`);
}

function normalisePath(p: string): string {
  // posix resolve drops `.` and `..` segments and repeated slashes: `/acme/../victim` is `/victim`.
  return resolve('/', p);
}

/** A local path as it will be opened: its longest existing ancestor through its links, then the rest. */
function realOrResolved(p: string): string {
  let head = resolve(p);
  const rest: string[] = [];
  for (;;) {
    try {
      return join(realpathSync(head), ...rest);
    } catch {
      const parent = dirname(head);
      if (parent === head) return resolve(p);
      rest.unshift(basename(head));
      head = parent;
    }
  }
}

function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);
}
