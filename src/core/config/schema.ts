// The configuration contract: one strict zod schema shared by .acia/config.json, the user file, env and flags.
import { z } from 'zod';
import { isHostRule } from '../sandbox/egress-proxy.js';
import { UserMcpServers } from '../tools/mcp/config.js';
import { HooksConfig } from '../hooks/config.js';

export const DEFAULT_MODEL = 'anthropic:claude-sonnet-5-5';

export const ModelSpec = z
  .string()
  .regex(/^(anthropic|openai|scripted|chaos):.+$/, 'expected anthropic:<id>, openai:<id>, scripted:<file> or chaos:<file>[,seed=N,rate=R]');

export const PriceOverride = z.strictObject({
  inputPerMTok: z.number().nonnegative(),
  outputPerMTok: z.number().nonnegative(),
  cacheWritePerMTok: z.number().nonnegative(),
  cacheReadPerMTok: z.number().nonnegative(),
});

export const Config = z.strictObject({
  model: ModelSpec.default(DEFAULT_MODEL),
  openaiBaseUrl: z.url().optional(),
  anthropicBaseUrl: z.url().optional(),
  maxTokensPerCall: z.number().int().min(256).max(128_000).default(8192),
  budget: z
    .strictObject({
      maxCostUsd: z.number().positive().optional(),
      maxTokens: z.number().int().positive().optional(),
      maxMinutes: z.number().positive().optional(),
    })
    .default({}),
  maxIterations: z.number().int().min(0).max(50).default(3),
  parallel: z.number().int().min(1).max(32).default(2),
  sandbox: z.enum(['auto', 'bwrap', 'off']).default('auto'),
  allowedHosts: z.array(z.string().min(1).refine(isHostRule, 'expected a host, host:port or *.domain')).default([]),
  testCommand: z.string().min(1).optional(),
  /** Run sandboxed in each task worktree before its agent starts (e.g. `npm run build`). */
  setup: z.string().min(1).optional(),
  protectedPaths: z.array(z.string().min(1)).default([]),
  commandTimeoutS: z.number().int().min(1).max(3600).default(300),
  /** Per sandboxed command: memory (MiB) and the size of its private /tmp (MiB). */
  sandboxLimits: z
    .strictObject({
      memoryMb: z.number().int().min(64).max(1_048_576).default(4096),
      tmpMb: z.number().int().min(1).max(1_048_576).default(1024),
    })
    .default({ memoryMb: 4096, tmpMb: 1024 }),
  prices: z.record(z.string(), PriceOverride).default({}),
  /** Append the lessons agents propose to .acia/wiki/memory/lessons.md when a session ends. */
  memoryLessons: z.boolean().default(true),
  /** MCP servers whose tools agents may use; only the user's own config may define them (see .mcp.json). */
  mcpServers: UserMcpServers.default({}),
  /**
   * The environment variables a repository's MCP servers (.mcp.json) may receive through `${VAR}`; any
   * other reference stays literal. Only the user's own config may set it.
   */
  mcpEnvAllow: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected a variable name')).default([]),
  /** How long an MCP server without its own `startupTimeoutS` may take to answer the handshake (`npx -y` fetches first). */
  mcpStartupTimeoutS: z.number().positive().max(600).optional(),
  /**
   * Who does Dev tasks: `acia` (ACIA's own Dev agent), a name from `devAgents`, or `acp:<command>`
   * (an ACP agent started with that command line in the task's worktree, inside the sandbox).
   */
  devAgent: z.string().min(1).regex(/^(acp:.+|[a-z0-9][a-z0-9_-]*(,[a-z0-9][a-z0-9_-]*)*)$/, 'expected acia, acp:<command>, a name from devAgents, or several names separated by commas').default('acia'),
  /**
   * What an external agent's model calls may use through ACIA's metering proxy beyond plain model calls:
   * extra `anthropic-beta` values, and server-side tools / `mcp_servers` / `container` (Anthropic's side acts on them).
   */
  meteringProxy: z
    .strictObject({
      allowBetas: z.array(z.string().regex(/^[a-z0-9-]+$/, 'expected a beta name such as files-api-2025-04-14')).default([]),
      allowServerTools: z.boolean().default(false),
    })
    .default({ allowBetas: [], allowServerTools: false }),
  /**
   * `acia worker`'s policy over what submitters ask of it (see docs/scale-out.md, "Tenancy"): the
   * repositories it clones and pushes to (`https://github.com/acme`, `ssh://git@git.example.com`,
   * `file:///srv/git`; none listed: it refuses every run), whether a submitter may turn the sandbox off,
   * the directories a submitted `scripted:` model file may lie in, and caps on every run's budget.
   */
  fleetWorker: z
    .strictObject({
      repos: z.array(z.string().min(1)).default([]),
      allowSandboxOff: z.boolean().default(false),
      scriptedModelDirs: z.array(z.string().min(1).refine((d) => d.startsWith('/'), 'expected an absolute directory')).default([]),
      maxCostUsd: z.number().positive().optional(),
      maxTokens: z.number().int().positive().optional(),
    })
    .default({ repos: [], allowSandboxOff: false, scriptedModelDirs: [] }),
  /** A model per role (`--model pm=...,dev=...`), over what the role's file says; other roles use `model`. */
  roleModels: z.record(z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'expected a role name'), ModelSpec).default({}),
  /** Stop after planning until a human approves the plan, picks the other one, edits it or rejects it (`--approve-plan`). */
  approvePlan: z.boolean().default(false),
  /**
   * Commands run at points of the team's lifecycle (docs/hooks.md): quality gates, guards, notifications.
   * Every file's hooks apply, the user's first; the repository's only once trusted (`acia trust`).
   */
  hooks: HooksConfig.default([]),
  /**
   * Named external ACP agents: a command line (`{"claude-code": "claude-code-acp"}`), or the command and
   * the model API it speaks (`{"codex": {"command": "codex-acp", "api": "openai"}}`). Without `api`, the
   * built-in names keep theirs (`codex`: openai, `gemini`: gemini) and others speak Anthropic's.
   */
  devAgents: z
    .record(
      z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, 'expected a lower-case name'),
      z.union([z.string().min(1), z.strictObject({ command: z.string().min(1), api: z.enum(['anthropic', 'openai', 'gemini']).optional() })]),
    )
    .default({}),
});
export type Config = z.infer<typeof Config>;

/** The provider-local model id of `anthropic:<id>` or `openai:<id>`; `scripted` for a script file. */
export function modelIdOf(spec: string): string {
  const i = spec.indexOf(':');
  const provider = spec.slice(0, i);
  return provider === 'scripted' || provider === 'chaos' ? 'scripted' : spec.slice(i + 1);
}
