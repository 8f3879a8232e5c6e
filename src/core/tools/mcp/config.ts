// Which MCP servers a run may use: `mcpServers` from the user's config and, only once the user has
// trusted it, the repository's `.mcp.json` (Claude Code's format). `${VAR}` expands when a server starts:
// in the user's own servers, any variable; in the repository's, only the ones the user's config lists in
// `mcpEnvAllow` (and ACIA_WORKTREE). Everything else stays literal text: a repository cannot ask for
// `${DATABASE_URL}` in a header to a URL it chose, whatever the variable is called.
import { join } from 'node:path';
import { z } from 'zod';
import { AciaError, errorMessage, isAciaError } from '../../errors.js';
import { readRepoFile } from '../../config/trust.js';
import { isHostRule } from '../../sandbox/egress-proxy.js';

export type AgentRoleName = 'pm' | 'dev' | 'qa';
export type McpTransport = 'stdio' | 'http' | 'sse';
/** What one role sees of a server: nothing, its tools annotated read-only, or all of them. */
export const RoleAccess = z.enum(['none', 'readOnly', 'all']);
export type RoleAccess = z.infer<typeof RoleAccess>;
export const DEFAULT_ACCESS: Record<AgentRoleName, RoleAccess> = { pm: 'readOnly', dev: 'all', qa: 'all' };

const ServerName = z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'a server name is 1-32 letters, digits, _ or -');

/** The keys both places share; the repository's file may carry only these. */
const sharedShape = {
  type: z.enum(['stdio', 'http', 'streamable-http', 'sse']).optional(),
  command: z.string().min(1).optional(),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  url: z.string().min(1).optional(),
  headers: z.record(z.string(), z.string()).default({}),
  includeTools: z.array(z.string()).optional(),
  excludeTools: z.array(z.string()).default([]),
  agents: z.strictObject({ pm: RoleAccess.optional(), dev: RoleAccess.optional(), qa: RoleAccess.optional() }).default({}),
  allowedHosts: z.array(z.string().refine(isHostRule, 'expected a host, host:port or *.domain')).default([]),
  startupTimeoutS: z.number().positive().max(600).optional(),
  callTimeoutS: z.number().positive().max(3600).optional(),
};

/** An entry of `mcpServers` in the user's config: the only place that may turn a server's sandbox off. */
export const UserMcpServer = z.strictObject({ ...sharedShape, sandbox: z.boolean().default(true) });
export type UserMcpServer = z.infer<typeof UserMcpServer>;
export const UserMcpServers = z.record(ServerName, UserMcpServer);

/** `.mcp.json` as Claude Code writes it; unknown keys (other tools' settings) are ignored, `sandbox` too. */
const RepoMcpServer = z.object(sharedShape);
const McpJson = z.object({ mcpServers: z.record(ServerName, RepoMcpServer).default({}) });

export interface McpServerSpec {
  name: string;
  /** Where it was defined: the user config path, the `.mcp.json` path, or the ACP client's session. */
  source: string;
  /** `sse` is the legacy HTTP+SSE transport (2024-11-05) that many published servers still speak. */
  transport: McpTransport;
  command: string | undefined;
  args: string[];
  env: Record<string, string>;
  url: string | undefined;
  headers: Record<string, string>;
  includeTools: string[] | undefined;
  excludeTools: string[];
  access: Record<AgentRoleName, RoleAccess>;
  allowedHosts: string[];
  /** False only when the user's own config says so. */
  sandbox: boolean;
  /** Defined by the repository (.mcp.json). */
  fromRepo: boolean;
  /** The variables its `${VAR}`s may expand; null for the user's own servers (any variable). */
  envAllow: readonly string[] | null;
  startupTimeoutMs: number;
  callTimeoutMs: number | undefined;
}

/** A repository server the user has not trusted yet: listed, never started. */
export interface BlockedServer {
  name: string;
  source: string;
  reason: string;
  /** Trusted, but its entry cannot be used (no command, no url): a failure to report, not a trust question. */
  unusable?: boolean;
}

export interface McpServerSet {
  servers: McpServerSpec[];
  blocked: BlockedServer[];
}

/** Tells whether the user trusted this repository file with exactly these bytes (`acia trust`). */
export type TrustPredicate = (file: string, content: Buffer) => boolean;
export const notTrusted: TrustPredicate = () => false;

export interface LoadMcpOptions {
  repo: string | null;
  /** `mcpServers` from the user's config (already validated), and the file it came from. */
  user: { servers: Record<string, UserMcpServer>; file: string } | null;
  isTrusted?: TrustPredicate;
  /** `mcpEnvAllow` from the user's config: the variables a repository's server may receive. */
  envAllow?: readonly string[];
  /** `mcpStartupTimeoutS` from the config: the start-up time-out of a server that sets none of its own. */
  startupTimeoutS?: number | undefined;
  /**
   * Servers an ACP client (the user's editor) handed to its session: the user's choice, so they start
   * without a trust step, but always sandboxed, and their values are taken literally (no `${VAR}`).
   */
  client?: { servers: Record<string, UserMcpServer>; source: string };
}

export const DEFAULT_STARTUP_TIMEOUT_MS = 30_000;

/** The one reader of `.mcp.json`: its servers run only when `isTrusted` says so (default: never). */
export function loadMcpServers(o: LoadMcpOptions): McpServerSet {
  const servers: McpServerSpec[] = [];
  const blocked: BlockedServer[] = [];
  const taken = new Set<string>();
  const startupMs = o.startupTimeoutS === undefined ? DEFAULT_STARTUP_TIMEOUT_MS : o.startupTimeoutS * 1000;
  for (const [name, s] of Object.entries(o.user?.servers ?? {})) {
    servers.push(toSpec(name, o.user!.file, s, s.sandbox, null, startupMs));
    taken.add(name);
  }
  for (const [name, s] of Object.entries(o.client?.servers ?? {})) {
    const source = o.client!.source;
    if (taken.has(name)) {
      blocked.push({ name, source, reason: `your config already defines a server named ${name}; that one is used`, unusable: true });
      continue;
    }
    try {
      servers.push({ ...toSpec(name, source, s, true, [REPO_ALWAYS], startupMs), fromRepo: false });
      taken.add(name);
    } catch (e) {
      blocked.push({ name, source, reason: errorMessage(e).replace(`MCP server ${name} in ${source}: `, ''), unusable: true });
    }
  }
  if (o.repo !== null) {
    const file = join(o.repo, '.mcp.json');
    const content = readIfExists(o.repo, file);
    if (content === 'link') {
      blocked.push({ name: '*', source: file, reason: 'it is a symbolic link or not a regular file; ACIA reads only a regular .mcp.json' });
    } else if (content !== null) {
      // The bytes checked for trust are the bytes parsed: no second read a swap could slip between.
      const trusted = (o.isTrusted ?? notTrusted)(file, content);
      let parsed: Record<string, z.infer<typeof RepoMcpServer>>;
      try {
        parsed = parseMcpJson(file, content.toString('utf8'));
      } catch (e) {
        // An untrusted file is never used, so its mistakes are not the user's problem yet.
        if (trusted) throw e;
        blocked.push({ name: '*', source: file, reason: `not trusted, and not valid: ${(e as Error).message}` });
        parsed = {};
      }
      for (const [name, s] of Object.entries(parsed)) {
        // The user's own definition of a name wins over the repository's.
        if (taken.has(name)) continue;
        if (!trusted) {
          blocked.push({ name, source: file, reason: 'the repository file .mcp.json is not trusted (run `acia trust` after reading it)' });
          continue;
        }
        // One entry this version cannot use (a file shared with other tools) is skipped with its reason;
        // the other servers, and the run, go on.
        try {
          servers.push(toSpec(name, file, s, true, [REPO_ALWAYS, ...(o.envAllow ?? [])], startupMs));
        } catch (e) {
          blocked.push({ name, source: file, reason: errorMessage(e).replace(`MCP server ${name} in ${file}: `, ''), unusable: true });
        }
      }
    }
  }
  return { servers, blocked };
}

/** ACIA's own variable, the worktree an instance serves: every server may have it. */
const REPO_ALWAYS = 'ACIA_WORKTREE';

function toSpec(name: string, source: string, s: z.infer<typeof RepoMcpServer>, sandbox: boolean, envAllow: readonly string[] | null, defaultStartupMs: number): McpServerSpec {
  const transport = transportOf(s);
  if (transport === 'stdio' && s.command === undefined) throw new AciaError('CONFIG_INVALID', `MCP server ${name} in ${source}: no "command" (or "url" for HTTP)`);
  if (transport !== 'stdio' && s.url === undefined) throw new AciaError('CONFIG_INVALID', `MCP server ${name} in ${source}: type "${s.type ?? 'http'}" but no "url"`);
  return {
    name,
    source,
    transport,
    command: s.command,
    args: s.args,
    env: s.env,
    url: s.url,
    headers: s.headers,
    includeTools: s.includeTools,
    excludeTools: s.excludeTools,
    access: { ...DEFAULT_ACCESS, ...definedOnly(s.agents) },
    allowedHosts: s.allowedHosts,
    sandbox,
    fromRepo: envAllow !== null,
    envAllow,
    startupTimeoutMs: s.startupTimeoutS === undefined ? defaultStartupMs : s.startupTimeoutS * 1000,
    callTimeoutMs: s.callTimeoutS === undefined ? undefined : s.callTimeoutS * 1000,
  };
}

/** Claude Code's rules: an explicit type wins; a url alone is streamable HTTP; otherwise a command. */
function transportOf(s: z.infer<typeof RepoMcpServer>): McpTransport {
  if (s.type === 'sse') return 'sse';
  if (s.type === 'http' || s.type === 'streamable-http') return 'http';
  if (s.type === undefined && s.url !== undefined && s.command === undefined) return 'http';
  return 'stdio';
}

function definedOnly(a: Partial<Record<AgentRoleName, RoleAccess | undefined>>): Partial<Record<AgentRoleName, RoleAccess>> {
  const out: Partial<Record<AgentRoleName, RoleAccess>> = {};
  for (const [k, v] of Object.entries(a)) if (v !== undefined) out[k as AgentRoleName] = v;
  return out;
}

function parseMcpJson(file: string, content: string): Record<string, z.infer<typeof RepoMcpServer>> {
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch (e) {
    throw new AciaError('CONFIG_INVALID', `${file} is not valid JSON: ${(e as Error).message}`);
  }
  const parsed = McpJson.safeParse(value);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new AciaError('CONFIG_INVALID', `invalid value for "${first?.path.join('.') ?? ''}" in ${file}: ${first?.message ?? 'invalid'}`);
  }
  return parsed.data.mcpServers;
}

/** The repository's file read as trust reads it: no link followed, no FIFO waited on (core/config/trust.ts). */
function readIfExists(repo: string, file: string): Buffer | 'link' | null {
  try {
    return readRepoFile(repo, file);
  } catch (e) {
    if (isAciaError(e) && e.code === 'UNSAFE_REPO') return 'link';
    throw new AciaError('CONFIG_INVALID', `cannot read ${file}: ${(e as Error).message}`);
  }
}

const VAR_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Expands `${VAR}` and `${VAR:-default}` the way Claude Code does. A variable that is unset and has
 * no default is an error naming it, so a server never starts with half its configuration. With `allow`,
 * a reference to any other variable is left as it is, default and all.
 */
export function expandVars(text: string, env: Readonly<Record<string, string | undefined>>, where: string, allow: readonly string[] | null = null): string {
  return text.replace(VAR_REF, (whole, name: string, fallback: string | undefined) => {
    if (allow !== null && !allow.includes(name)) return whole;
    const v = env[name];
    if (v !== undefined && v !== '') return v;
    if (fallback !== undefined) return fallback;
    throw new AciaError('CONFIG_INVALID', `${where} uses \${${name}}, which is not set`);
  });
}

/**
 * The spec with its `${VAR}`s expanded; `ACIA_WORKTREE` is the worktree the instance serves. A repository's
 * server expands only the variables in its envAllow: a file someone else wrote, plus the URL and hosts it
 * also chooses, must not be a way to ship your credentials out.
 */
export function expandSpec(spec: McpServerSpec, env: Readonly<Record<string, string | undefined>>): McpServerSpec {
  const where = `MCP server ${spec.name} (${spec.source})`;
  const x = (t: string) => expandVars(t, env, where, spec.envAllow);
  const mapValues = (r: Record<string, string>) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, x(v)]));
  return {
    ...spec,
    command: spec.command === undefined ? undefined : x(spec.command),
    args: spec.args.map(x),
    env: mapValues(spec.env),
    url: spec.url === undefined ? undefined : x(spec.url),
    headers: mapValues(spec.headers),
  };
}

/** What `acia trust` shows for a server: the variables it names, and which of them it would receive. */
export interface VariableUse {
  server: string;
  received: string[];
  literal: string[];
}

/** The `${VAR}` names each server's command, args, env, url and headers use, split by envAllow. */
export function variablesOf(spec: McpServerSpec): VariableUse {
  const texts = [spec.command ?? '', ...spec.args, ...Object.values(spec.env), spec.url ?? '', ...Object.values(spec.headers)];
  const names = [...new Set(texts.flatMap((t) => [...t.matchAll(VAR_REF)].map((m) => m[1]!)))].sort();
  const allowed = (n: string) => spec.envAllow === null || spec.envAllow.includes(n);
  return { server: spec.name, received: names.filter(allowed), literal: names.filter((n) => !allowed(n)) };
}
