// Assembles the real dependencies of a run: the model client, the sandboxed tools, the file ledger,
// the wiki, policy, guards and plan validation. The team itself only sees the TeamDeps seams.
import * as nodeFs from 'node:fs';
import { existsSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { AciaError } from '../core/errors.js';
import { modelIdOf, type Config } from '../core/config/schema.js';
import { randomIds, systemClock } from '../core/acm/ids.js';
import { guardAciaState } from '../core/contain/clone-guard.js';
import { requireRunDir } from '../core/contain/acia-state.js';
import { openRunLedger } from '../core/ledger/file-ledger.js';
import { writeManifest } from '../core/ledger/manifest.js';
import { buildBundle } from '../core/ledger/bundle.js';
import { readAnchor, writeAnchor } from '../core/ledger/anchor.js';
import { verifyRun, type VerifyCode } from '../core/ledger/verify.js';
import { memoryTemplate, readMemory, readMemoryPage, writeMemoryPage } from '../core/wiki/memory.js';
import { renderWiki } from '../core/wiki/render.js';
import { DefaultPolicy, MAX_TASKS_PER_PLAN } from '../core/policy/policy.js';
import { createLlmClient } from '../core/llm/model-spec.js';
import { parseChaosSpec } from '../core/llm/chaos-client.js';
import { costUsd, estimateRequestTokens } from '../core/llm/pricing.js';
import { devTools } from '../core/tools/tool-sets.js';
import { runSetup } from '../core/tools/run-setup.js';
import { callTool } from '../core/tools/define-tool.js';
import { probeSandbox } from '../core/sandbox/detect.js';
import { sandboxRunner } from './sandbox-runner.js';
import { findProjectVenv } from '../core/sandbox/python-env.js';
import { evaluateGuard, parseGuard } from '../core/acm/guard.js';
import { validatePlanSet } from '../core/acm/validate-plan.js';
import { commitBundle } from './bundle-commit.js';
import { defaultCapabilityMap } from '../core/acm/capabilities.js';
import type { CommandRunner, Tool } from '../core/tools/types.js';
import type { LlmClient, LlmRequest } from '../core/llm/types.js';
import type { AgentEndpoint, Escalator, ModelDeps, TeamDeps, TeamEvent } from '../team/deps.js';
import type { AgentApi } from '../team/agents-acp/proxy-common.js';
import { fileCancelWatch } from '../team/cancel.js';
import { readVersion } from './version.js';
import type { LoadMcpOptions, TrustPredicate } from '../core/tools/mcp/config.js';
import { McpHub } from '../core/tools/mcp/hub.js';
import { configuredMcpServers, repoMcpTrust } from './mcp-trust.js';
import { describeIgnoredRoles, findRoles } from './role-catalog.js';
import { LiveHooks } from '../core/hooks/source.js';
import { resolveHooks } from '../core/hooks/config.js';

export interface BuildDepsOptions {
  repo: string;
  config: Config;
  env: NodeJS.ProcessEnv;
  escalator: Escalator;
  signal?: AbortSignal;
  onEvent?: (event: TeamEvent) => void;
  warn: (message: string) => void;
  /** The demo's fake server instead of the user's endpoint and key. */
  anthropic?: { baseURL: string; apiKey: string };
  /** The demo may run unsandboxed (with a warning) where bubblewrap is missing. */
  allowSandboxFallback?: boolean;
  /** Whether the repository's .mcp.json is trusted as it is now (default: src/app/mcp-trust.ts). */
  isMcpJsonTrusted?: TrustPredicate;
  /** MCP servers an ACP client gave its session (the user's editor): started like the user's own, sandboxed. */
  clientMcpServers?: LoadMcpOptions['client'];
  /** Load the model client at once, in parallel with the run's start-up (`acia run`), not at its first call. */
  prefetchModelClient?: boolean;
}

/** Where external agents' model calls go, per API, with the user's key for it (the demo: its fake server). */
function agentEndpoints(o: BuildDepsOptions): Partial<Record<AgentApi, AgentEndpoint>> {
  if (o.anthropic) return { anthropic: { baseURL: o.anthropic.baseURL, apiKey: o.anthropic.apiKey, keyVar: 'ANTHROPIC_API_KEY' } };
  return {
    anthropic: { baseURL: o.config.anthropicBaseUrl ?? o.env.ANTHROPIC_BASE_URL ?? 'https://api.anthropic.com', apiKey: o.env.ANTHROPIC_API_KEY, keyVar: 'ANTHROPIC_API_KEY' },
    openai: { baseURL: o.config.openaiBaseUrl ?? o.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1', apiKey: o.env.OPENAI_API_KEY, keyVar: 'OPENAI_API_KEY' },
    gemini: { baseURL: o.env.GOOGLE_GEMINI_BASE_URL ?? 'https://generativelanguage.googleapis.com', apiKey: o.env.GEMINI_API_KEY ?? o.env.GOOGLE_API_KEY, keyVar: 'GEMINI_API_KEY' },
  };
}

/**
 * What stops a resume: a run this user's state does not anchor, or a ledger that no longer matches the
 * anchor. A torn tail (a crash mid-write) or a missing wiki page is what resume repairs, so those pass.
 */
const RESUME_BLOCKERS: ReadonlySet<VerifyCode> = new Set<VerifyCode>(['UNANCHORED', 'ANCHOR_MISMATCH', 'TRUNCATED', 'CHAIN_BROKEN', 'HASH_MISMATCH', 'SEQ_GAP', 'RUN_ID', 'PARSE', 'SCHEMA']);

/** Refuses a run whose ledger the user's state directory does not anchor, or no longer matches. */
export async function checkRunAnchored(env: NodeJS.ProcessEnv, runDir: string, runId: string): Promise<void> {
  const report = await verifyRun(runDir, { runId, anchor: readAnchor(env, runDir, runId) });
  // No complete entry: nothing can be taken from it (resume then says the run never started).
  if (report.entries === 0) return;
  const bad = report.problems.find((p) => RESUME_BLOCKERS.has(p.code));
  if (bad) {
    throw new AciaError('UNSAFE_REPO', `refusing to resume run ${runId}: ${bad.code} ${bad.message}`, {
      hint: `a run is resumed only as ACIA recorded it for you; see \`acia verify ${runId}\`, and start a new run instead`,
    });
  }
}

/** The checks `acia resume` makes before it reads anything from a run's ledger. */
export async function checkResumable(env: NodeJS.ProcessEnv, repo: string, runId: string): Promise<void> {
  const runDir = requireRunDir(repo, runId);
  await guardAciaState(repo);
  await checkRunAnchored(env, runDir, runId);
}

/**
 * The real dependencies of a run, as the CLI wires them: the configured model client, the sandboxed tools,
 * the file ledger, the wiki, policy and plan validation. Pass the result to `startRun` or `resumeRun`.
 *
 * @throws AciaError SANDBOX_UNAVAILABLE when the configured sandbox cannot start.
 */
export async function buildDeps(o: BuildDepsOptions): Promise<TeamDeps> {
  let model = modelIdOf(o.config.model);
  const clientEnv = o.anthropic ? { ...o.env, ANTHROPIC_API_KEY: o.anthropic.apiKey } : o.env;
  // Built on first use: a resume that only records the human's "abort" needs no model or key. A script
  // is read now, because the model it names is what the run is priced as.
  let made: Promise<LlmClient> | null = null;
  if (o.config.model.startsWith('scripted:') || o.config.model.startsWith('chaos:')) {
    const created = await createLlmClient(o.config.model, clientEnv, { cwd: o.repo });
    made = Promise.resolve(created.client);
    model = created.model;
  }
  const make = (): Promise<LlmClient> =>
    createLlmClient(o.config.model, clientEnv, {
      cwd: o.repo,
      ...(o.anthropic ? { anthropicBaseUrl: o.anthropic.baseURL } : o.config.anthropicBaseUrl ? { anthropicBaseUrl: o.config.anthropicBaseUrl } : {}),
      ...(o.config.openaiBaseUrl ? { openaiBaseUrl: o.config.openaiBaseUrl } : {}),
    }).then((c) => c.client);
  if (made === null && o.prefetchModelClient === true) {
    // Start loading the SDK now, while the run's git work waits on child processes; a failure (no key)
    // still surfaces only at the first model call, as without the prefetch.
    made = make();
    made.catch(() => undefined);
  }
  const client: LlmClient = {
    provider: o.config.model.split(':')[0] ?? 'unknown',
    complete: async (request, options) => {
      made ??= make();
      return (await made).complete(request, options);
    },
  };
  const { runnerFor, mode } = await chooseRunner(o);
  const mcp = mcpHub(o, mode);
  const base = staticDeps(o.config, o.warn);
  const found = findRoles(o.repo, o.env);
  if (found.ignored.length > 0) o.warn(describeIgnoredRoles(found.ignored));
  // A role's own model: a client per model spec, made when the run's roles are loaded.
  const others = new Map<string, Promise<ModelDeps>>();
  const forSpec = (spec: string): Promise<ModelDeps> => {
    let made = others.get(spec);
    if (!made) {
      made = createLlmClient(spec, clientEnv, {
        cwd: o.repo,
        ...(o.anthropic ? { anthropicBaseUrl: o.anthropic.baseURL } : o.config.anthropicBaseUrl ? { anthropicBaseUrl: o.config.anthropicBaseUrl } : {}),
        ...(o.config.openaiBaseUrl ? { openaiBaseUrl: o.config.openaiBaseUrl } : {}),
      }).then((c) => ({ ...base.model, client: c.client, id: c.model, spec }));
      others.set(spec, made);
    }
    return made;
  };
  return {
    config: o.config,
    roles: found.catalog,
    model: {
      ...base.model,
      client,
      id: model,
      spec: o.config.model,
      forSpec,
      endpoints: agentEndpoints(o),
    },
    tools: { ...base.tools, runnerFor, fs: nodeFs, environment: (repo) => ({ venv: findProjectVenv(repo, o.env) }), ...(mcp ? { mcp } : {}) },
    store: {
      openLedger: (runDir, runId, opts) => openRunLedger(runDir, runId, { clock: systemClock, create: opts.create }),
      readMemory: async (repo) => {
        // An untouched template says nothing about the project; leaving it out keeps the Context Packet the
        // same before and after the first run creates the pages, so a plan saved then still matches.
        const pages = await readMemory(repo);
        const kept: { page: string; content: string }[] = [];
        for (const p of pages) if (p.content !== (await memoryTemplate(p.page).catch(() => null))) kept.push({ page: p.page, content: p.content });
        return kept;
      },
      memoryPages: { read: readMemoryPage, write: writeMemoryPage },
      renderWiki: async (repo) => {
        await renderWiki(repo);
      },
      writeManifest: (runDir, manifest) => writeManifest(runDir, manifest),
      writeBundle: async (repo, runId, manifest) => {
        const { dir } = await buildBundle(repo, runId, undefined, { runManifest: manifest });
        // Under version control with immutable ids too: refs/acia/bundles/<run> (bundle-commit.ts).
        await commitBundle(repo, runId, dir, new Date(manifest.updatedAt));
      },
      anchor: {
        write: (runDir, runId, head, status) => Promise.resolve(writeAnchor(o.env, runDir, runId, head, status, systemClock.now())),
        check: (runDir, runId) => checkRunAnchored(o.env, runDir, runId),
      },
    },
    governance: { ...base.governance, escalator: o.escalator, ...liveHooks(o, mode) },
    runtime: {
      ...base.runtime,
      clock: systemClock,
      ids: randomIds,
      // `acia cancel` from another process: the request file beside the run's ledger.
      cancelWatch: fileCancelWatch(),
      ...(o.onEvent ? { onEvent: o.onEvent } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
    },
  };
}

/** The parts that do not touch the outside world; replay uses them as they are. */
export function staticDeps(config: Config, warn: (m: string) => void) {
  // The built-in tools; each agent definition picks its own subset by name.
  // run_setup is for the team (config `setup`); no agent definition names it.
  const builtin: readonly Tool[] = [...devTools, runSetup];
  return {
    config,
    tools: {
      builtin,
      toSpec: (t: Tool) => ({ name: t.name, description: t.description, inputSchema: t.descriptor.inputSchema }),
      call: callTool,
    },
    governance: {
      policy: new DefaultPolicy({ protectedPaths: config.protectedPaths, maxTasksPerPlan: MAX_TASKS_PER_PLAN }),
      evalGuard: (src: string, scope: Parameters<typeof evaluateGuard>[1]) => evaluateGuard(parseGuard(src), scope),
      capabilityMap: defaultCapabilityMap,
      validatePlanSet: (planSet: unknown, facts?: Record<string, unknown>) => {
        const r = validatePlanSet(planSet, defaultCapabilityMap, facts === undefined ? {} : { facts });
        return r.errors.map((p) => ({ path: p.path, message: p.message }));
      },
    },
    model: {
      costUsd: (model: string, usage: Parameters<typeof costUsd>[1]) => costUsd(model, usage, { overrides: config.prices, warn }),
      // A call is budgeted at its estimated input plus a full max_tokens reply, so a hard limit is never passed.
      // The request is measured once (it grows every turn): estimateCallCost would measure it again.
      estimate: (model: string, request: LlmRequest) => {
        const inputTokens = estimateRequestTokens(request);
        const usage = { inputTokens, outputTokens: config.maxTokensPerCall, cacheReadTokens: 0, cacheWriteTokens: 0 };
        return { usd: costUsd(model, usage, { overrides: config.prices, warn: () => undefined }), tokens: inputTokens + config.maxTokensPerCall };
      },
    },
    runtime: { aciaVersion: readVersion() },
  };
}

/**
 * The configured hooks. Where the demo fell back to no sandbox (the user did not choose it), a hook meant
 * for the sandbox would run with the user's permissions: it is left out, with a warning, rather than moved out.
 */
function liveHooks(o: BuildDepsOptions, mode: 'bwrap' | 'off'): { hooks?: LiveHooks } {
  let hooks = resolveHooks(o.config.hooks);
  if (mode === 'off' && o.config.sandbox !== 'off') {
    const left = hooks.filter((h) => h.sandbox);
    if (left.length > 0) o.warn(`hooks not run without the sandbox: ${left.map((h) => h.id).join(', ')}`);
    hooks = hooks.filter((h) => !h.sandbox);
  }
  return hooks.length > 0 ? { hooks: new LiveHooks(hooks, o.env) } : {};
}

/** The run's MCP servers: the user's, and the repository's .mcp.json only when trusted. None: no hub. */
function mcpHub(o: BuildDepsOptions, mode: 'bwrap' | 'off'): McpHub | null {
  const set = configuredMcpServers(o.repo, o.config, o.env, o.isMcpJsonTrusted ?? repoMcpTrust, o.clientMcpServers);
  for (const b of set.blocked) o.warn(`MCP server ${b.name} from ${b.source} not started: ${b.reason}`);
  // A server meant to run but unusable is listed in the catalog with its reason, so the agents read why.
  const unusable = set.blocked.filter((b) => b.unusable === true);
  if (set.servers.length === 0 && unusable.length === 0) return null;
  return new McpHub(set.servers, { sandbox: mode, parentEnv: o.env, warn: o.warn, clientVersion: readVersion(), unusable });
}

/** Decides the sandbox once, then hands out one runner per worktree. */
async function chooseRunner(o: BuildDepsOptions): Promise<{ runnerFor: (root: string) => CommandRunner; mode: 'bwrap' | 'off' }> {
  let mode: 'bwrap' | 'off' = 'bwrap';
  if (o.config.sandbox === 'off') {
    o.warn('the sandbox is off: agent commands run with your permissions, files and network');
    mode = 'off';
  } else {
    // The probe `acia run` started on its way in, or a new one.
    const sb = await probeSandbox();
    if (sb.status === 'unavailable') {
      if (o.allowSandboxFallback && o.config.sandbox === 'auto') {
        o.warn(`${sb.reason}; the demo runs its scripted commands without a sandbox (install: ${sb.install})`);
        mode = 'off';
      } else {
        throw new AciaError('SANDBOX_UNAVAILABLE', `no sandbox can start: ${sb.reason}`, {
          hint: `install it (${sb.install}), or pass --sandbox off to run agent commands unsandboxed`,
        });
      }
    }
  }
  const runners = new Map<string, CommandRunner>();
  const runnerFor = (root: string): CommandRunner => {
    let r = runners.get(root);
    if (!r) {
      r = sandboxRunner(o.config, o.env, mode, root);
      runners.set(root, r);
    }
    return r;
  };
  return { runnerFor, mode };
}

/** One clear line before any work starts when the chosen model cannot be reached. */
export function preflightModel(config: Config, env: NodeJS.ProcessEnv, override: boolean, cwd: string = process.cwd()): void {
  if (override) return;
  if (config.model.startsWith('scripted:') || config.model.startsWith('chaos:')) {
    // Otherwise a typo surfaces only as a failed run with a ledger, after the context is built.
    const file = resolvePath(cwd, config.model.startsWith('chaos:') ? parseChaosSpec(config.model.slice('chaos:'.length)).script : config.model.slice('scripted:'.length));
    if (!existsSync(file)) throw new AciaError('FILE_NOT_FOUND', `no such script file: ${file} (model ${config.model})`, { hint: 'the script format: docs/scripted-model.md' });
  }
  if (config.model.startsWith('anthropic:') && !env.ANTHROPIC_API_KEY) {
    throw new AciaError('LLM_AUTH', `${config.model} needs ANTHROPIC_API_KEY, which is not set`, {
      hint: 'export ANTHROPIC_API_KEY=..., or choose another model with --model openai:<id> | scripted:<file>, or try `acia demo` (offline)',
    });
  }
}
