// The composition root: the team's complete deps for each mode a run can be in. Every member is given
// here, once: nothing is patched or deleted afterwards, and no member's absence selects a behaviour (a
// mode without MCP servers, a bundle or an anchor gets an explicit stand-in, team/deps-defaults.ts).
//   local               acia run / resume / demo, the ACP and MCP servers: this process, the file ledger
//   eval                acia eval and chaos trials: a local run per instance, with the harness's model
//   fleet-orchestrator  a fleet worker holding a run: PostgreSQL ledger, dev tasks handed to other workers
//   fleet-task          a fleet worker running one dev task of a run another worker holds
//   replay              acia replay: a recorded session's sources, no side effects
// The fleet's own parts (its ledger, workspace, budget gate, dispatcher) are made by src/fleet, which
// this layer does not import, and passed in.
import * as nodeFs from 'node:fs';
import { AciaError } from '../core/errors.js';
import type { Config } from '../core/config/schema.js';
import { asRunId, randomIds, systemClock, type IdSource } from '../core/acm/ids.js';
import { openRunLedger } from '../core/ledger/file-ledger.js';
import { writeManifest } from '../core/ledger/manifest.js';
import { buildBundle } from '../core/ledger/bundle.js';
import { writeAnchor } from '../core/ledger/anchor.js';
import type { LedgerHead } from '../core/ledger/types.js';
import type { RunManifest } from '../core/ledger/run-vocabulary.js';
import { memoryTemplate, readMemory, readMemoryPage, writeMemoryPage } from '../core/wiki/memory.js';
import { renderWiki } from '../core/wiki/render.js';
import { DefaultPolicy, MAX_TASKS_PER_PLAN } from '../core/policy/policy.js';
import { realSleep } from '../core/llm/retry.js';
import { costUsd, estimateRequestTokens } from '../core/llm/pricing.js';
import { builtinTools } from '../core/tools/tool-sets.js';
import { callTool } from '../core/tools/define-tool.js';
import { probeSandbox } from '../core/sandbox/detect.js';
import { findProjectVenv } from '../core/sandbox/python-env.js';
import { evaluateGuard, parseGuard } from '../core/acm/guard.js';
import { validatePlanSet } from '../core/acm/validate-plan.js';
import { defaultCapabilityMap } from '../core/acm/capabilities.js';
import type { CommandRunner, Tool } from '../core/tools/types.js';
import type { LlmClient, LlmRequest, Usage } from '../core/llm/types.js';
import type { McpToolSource } from '../core/tools/mcp/catalog.js';
import type { LoadMcpOptions, TrustPredicate } from '../core/tools/mcp/config.js';
import { LiveHooks, type HookSource } from '../core/hooks/source.js';
import { resolveHooks } from '../core/hooks/config.js';
import { sandboxRunner } from './sandbox-runner.js';
import { McpHub } from '../core/tools/mcp/hub.js';
import type { BudgetGate } from '../team/budget.js';
import type { Escalator, FleetDeps, StoreDeps, TeamDeps, TeamEvent } from '../team/deps.js';
import { localFleet, neverAborted, neverCancelled, noAnchor, noBundle, noHooks, noMcp } from '../team/deps-defaults.js';
import { fileCancelWatch, type CancelWatcher } from '../team/cancel.js';
import type { Mailbox } from '../team/mailbox.js';
import { Git } from '../team/git.js';
import { localRepoReader } from '../team/repo-reader.js';
import type { ReplayParts } from '../team/replay.js';
import { localWorkspace } from '../team/workspace.js';
import { checkRunAnchored } from './build-deps.js';
import { configuredMcpServers, repoMcpTrust } from './mcp-trust.js';
import { readVersion } from './version.js';
import { describeIgnoredRoles, findRoles } from './role-catalog.js';
import { roleModelSource } from './role-models.js';
import { commitBundle } from './bundle-commit.js';
import { agentEndpoints, modelClient } from './model-client.js';

/** What a front end gives for a run in a checkout on this machine. */
export interface LocalOptions {
  repo: string;
  config: Config;
  env: NodeJS.ProcessEnv;
  escalator: Escalator;
  warn: (message: string) => void;
  /** Ctrl-C, a server's cancel; none: nothing interrupts the run. */
  signal?: AbortSignal;
  onEvent?: (event: TeamEvent) => void;
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

/** The parts of a fleet run src/fleet makes: the run's ledger in PostgreSQL, its git remote, its shared budget. */
export interface FleetParts {
  runId: string;
  workerName: string;
  openLedger: StoreDeps['openLedger'];
  workspace: StoreDeps['workspace'];
  budgetGate: BudgetGate;
  /** `acia cancel --db`: the run's row in the fleet's database. */
  cancelWatch: CancelWatcher;
  /** Counts each model call this worker makes (its Prometheus metrics; a worker serving none counts nothing). */
  countModelCall: (model: string, usage: Usage, usd: number | null) => void;
  /** `acia say --db`: the session's messages, from the fleet's database instead of an inbox in this worker's clone. */
  mailbox: () => Mailbox;
}

export type DepsProfile =
  | ({ kind: 'local' } & LocalOptions)
  /** `client`: the harness's model (a chaos client over the scenario's script) instead of the configured one. */
  | ({ kind: 'eval'; client?: LlmClient; sleep?: (ms: number) => Promise<void> } & LocalOptions)
  /** `writeBundle`: the run's bundle, exported from the fleet's database into the worker's own directory. */
  | ({ kind: 'fleet-orchestrator'; fleet: FleetParts; dispatchTask: FleetDeps['dispatchTask']; publish: FleetPublish; writeBundle: StoreDeps['writeBundle'] } & LocalOptions)
  | ({ kind: 'fleet-task'; fleet: FleetParts } & LocalOptions)
  | { kind: 'replay'; parts: ReplayParts };

/** What an orchestrator also writes to the fleet's database whenever it anchors a head or writes a manifest. */
export interface FleetPublish {
  head: (runId: string, head: LedgerHead | null, status: string) => Promise<void>;
  manifest: (manifest: RunManifest) => Promise<void>;
}

/**
 * The team's deps for one mode. Pass the result to `startRun`, `resumeRun` or `replayRun`'s sessions.
 *
 * @throws AciaError SANDBOX_UNAVAILABLE when the configured sandbox cannot start.
 */
export async function createDeps(profile: DepsProfile): Promise<TeamDeps> {
  if (profile.kind === 'replay') return replayDeps(profile.parts);
  const o = profile;
  const { runnerFor, mode } = await chooseRunner(o);
  const base = staticParts(o.config, o.warn);
  const configured = await modelClient(o);
  // The harness's client answers as the configured model (a script names the model it is priced as).
  const model =
    profile.kind === 'eval' && profile.client
      ? { ...configured, client: profile.client }
      : profile.kind === 'fleet-orchestrator' || profile.kind === 'fleet-task'
        ? { ...configured, client: counted(configured.client, (usage) => base.model.costUsd(configured.id, usage), profile.fleet.countModelCall) }
        : configured;
  const store = localStore(o, runnerFor);
  const local = localFleet(o.config);
  const fleet: FleetDeps =
    profile.kind === 'fleet-orchestrator' || profile.kind === 'fleet-task'
      ? { dispatchTask: profile.kind === 'fleet-orchestrator' ? profile.dispatchTask : local.dispatchTask, workerName: profile.fleet.workerName, budgetGate: profile.fleet.budgetGate }
      : local;
  const runtime = {
    clock: systemClock,
    ids: profile.kind === 'fleet-orchestrator' || profile.kind === 'fleet-task' ? fixedRunId(profile.fleet.runId) : randomIds,
    sleep: profile.kind === 'eval' && profile.sleep ? profile.sleep : realSleep,
    signal: o.signal ?? neverAborted,
    // `acia cancel` from another process: the request file beside a local run's ledger, a fleet run's row.
    cancelWatch: profile.kind === 'fleet-orchestrator' || profile.kind === 'fleet-task' ? profile.fleet.cancelWatch : fileCancelWatch(),
    onEvent: o.onEvent ?? (() => undefined),
    aciaVersion: readVersion(),
    ...(profile.kind === 'fleet-orchestrator' || profile.kind === 'fleet-task' ? { mailbox: profile.fleet.mailbox } : {}),
  };
  const found = findRoles(o.repo, o.env);
  if (found.ignored.length > 0) o.warn(describeIgnoredRoles(found.ignored));
  const own = { ...base.model, client: model.client, id: model.id, spec: o.config.model, endpoints: agentEndpoints(o) };
  const meter = profile.kind === 'fleet-orchestrator' || profile.kind === 'fleet-task' ? profile.fleet.countModelCall : null;
  return {
    config: o.config,
    roles: found.catalog,
    model: { ...own, forSpec: roleModelSource(o, own, (c, id) => (meter === null ? c : counted(c, (usage) => base.model.costUsd(id, usage), meter))) },
    tools: { ...base.tools, runnerFor, fs: nodeFs, environment: (repo) => ({ venv: findProjectVenv(repo, o.env) }), mcp: mcpHub(o, mode) },
    store: fleetStore(profile, store),
    governance: { ...base.governance, escalator: o.escalator, hooks: liveHooks(o, mode) },
    runtime,
    fleet,
  };
}

/** A run's store on this machine: the file ledger, its bundle, the user's anchor, the wiki and memory pages. */
function localStore(o: LocalOptions, runnerFor: (root: string) => CommandRunner): StoreDeps {
  const git = new Git(systemClock);
  return {
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
    renderWiki: async (repo, live) => {
      await renderWiki(repo, live);
    },
    writeManifest: (runDir, manifest) => writeManifest(runDir, manifest),
    writeBundle: async (repo, runId, manifest, ledger) => {
      // The live ledger's entries and the blobs it wrote: the bundle need not parse or hash them again.
      const known = ledger.blobsWritten?.();
      const { dir } = await buildBundle(repo, runId, undefined, { runManifest: manifest, entries: ledger.entries(), ...(known ? { knownBlobs: known } : {}) });
      // Under version control with immutable ids too: refs/acia/bundles/<run> (bundle-commit.ts).
      await commitBundle(repo, runId, dir, new Date(manifest.updatedAt));
    },
    anchor: {
      write: (runDir, runId, head, status) => Promise.resolve(writeAnchor(o.env, runDir, runId, head, status, systemClock.now())),
      check: (runDir, runId) => checkRunAnchored(o.env, runDir, runId),
    },
    workspace: (repo, runId) => localWorkspace(git, runnerFor, repo, runId),
    repoReader: localRepoReader(git),
  };
}

/**
 * A fleet job's store: the run's ledger in PostgreSQL and its git remote. The orchestrator writes the run's
 * bundle (exported from the database, into the worker's own directory) and publishes its heads and
 * manifests to the database; a task job writes no bundle (its run's orchestrator does).
 */
function fleetStore(profile: Exclude<DepsProfile, { kind: 'replay' }>, local: StoreDeps): StoreDeps {
  if (profile.kind === 'local' || profile.kind === 'eval') return local;
  const store: StoreDeps = { ...local, openLedger: profile.fleet.openLedger, workspace: profile.fleet.workspace, writeBundle: noBundle };
  if (profile.kind === 'fleet-task') return store;
  const { publish } = profile;
  return {
    ...store,
    writeBundle: profile.writeBundle,
    anchor: {
      check: local.anchor.check,
      write: async (runDir, runId, head, status) => {
        await local.anchor.write(runDir, runId, head, status);
        await publish.head(runId, head, status);
      },
    },
    writeManifest: async (runDir, manifest) => {
      await local.writeManifest(runDir, manifest);
      await publish.manifest(manifest);
    },
  };
}

/** A fleet worker's model client: each call it makes is counted, priced as the run prices it. */
function counted(client: LlmClient, price: (usage: Usage) => number | null, count: FleetParts['countModelCall']): LlmClient {
  return {
    ...client,
    complete: async (request, options) => {
      const response = await client.complete(request, options);
      count(response.model, response.usage, price(response.usage));
      return response;
    },
  };
}

/** replayRun's composer: each recorded session's deps, through the replay profile. */
export function replayComposer(parts: ReplayParts): Promise<TeamDeps> {
  return createDeps({ kind: 'replay', parts });
}

/** A recorded session: its sources, the static parts, nothing that touches the outside. */
function replayDeps(p: ReplayParts): TeamDeps {
  const base = staticParts(p.config, () => undefined);
  return {
    config: p.config,
    // No external agent runs in a replay: its recorded outcome stands in, so no endpoint is needed.
    model: { ...base.model, ...p.model, endpoints: {}, ...(p.forSpec ? { forSpec: (spec: string, id: string | null) => Promise.resolve({ ...base.model, ...p.forSpec!(spec, id), endpoints: {} }) } : {}) },
    ...(p.roles ? { roles: p.roles } : {}),
    tools: { ...base.tools, runnerFor: () => refuseRunner, fs: nodeFs, environment: () => ({}), call: p.call, mcp: p.mcp },
    store: {
      openLedger: () => Promise.resolve(p.ledger),
      writeManifest: () => Promise.resolve(),
      writeBundle: noBundle,
      anchor: noAnchor,
      renderWiki: () => Promise.resolve(),
      memoryPages: p.memoryPages,
      readMemory: p.readMemory,
      workspace: p.workspace,
      repoReader: p.repoReader,
    },
    governance: { ...base.governance, escalator: p.escalator, hooks: p.hooks },
    runtime: { clock: p.clock, ids: fixedRunId(p.runId), sleep: () => Promise.resolve(), signal: neverAborted, cancelWatch: neverCancelled, onEvent: () => undefined, aciaVersion: readVersion(), ...(p.mailbox ? { mailbox: p.mailbox } : {}) },
    fleet: { ...localFleet(p.config), dispatchTask: p.dispatchTask },
  };
}

/** Replay never runs a command; a call here means the replay tried a side effect. */
const refuseRunner: CommandRunner = {
  run: () => Promise.reject(new AciaError('REPLAY_DIVERGED', 'replay tried to run a command')),
};

function fixedRunId(runId: string): IdSource {
  const id = asRunId(runId);
  return { runId: () => id };
}

/** The parts that do not touch the outside world: the built-in tools, policy, guards, plan checks, pricing. */
function staticParts(config: Config, warn: (m: string) => void) {
  return {
    tools: {
      builtin: builtinTools,
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
  };
}

/**
 * The configured hooks. Where the demo fell back to no sandbox (the user did not choose it), a hook meant
 * for the sandbox would run with the user's permissions: it is left out, with a warning, rather than moved out.
 */
function liveHooks(o: LocalOptions, mode: 'bwrap' | 'off'): HookSource {
  let hooks = resolveHooks(o.config.hooks);
  if (mode === 'off' && o.config.sandbox !== 'off') {
    const left = hooks.filter((h) => h.sandbox);
    if (left.length > 0) o.warn(`hooks not run without the sandbox: ${left.map((h) => h.id).join(', ')}`);
    hooks = hooks.filter((h) => !h.sandbox);
  }
  return hooks.length > 0 ? new LiveHooks(hooks, o.env) : noHooks;
}

/** The run's MCP servers: the user's, the ACP client's, and the repository's .mcp.json only when trusted. None: no servers at all. */
function mcpHub(o: LocalOptions, mode: 'bwrap' | 'off'): McpToolSource {
  const set = configuredMcpServers(o.repo, o.config, o.env, o.isMcpJsonTrusted ?? repoMcpTrust, o.clientMcpServers);
  for (const b of set.blocked) o.warn(`MCP server ${b.name} from ${b.source} not started: ${b.reason}`);
  // A server meant to run but unusable is listed in the catalog with its reason, so the agents read why.
  const unusable = set.blocked.filter((b) => b.unusable === true);
  if (set.servers.length === 0 && unusable.length === 0) return noMcp;
  return new McpHub(set.servers, { sandbox: mode, parentEnv: o.env, warn: o.warn, clientVersion: readVersion(), unusable });
}

/** Decides the sandbox once, then hands out one runner per worktree. */
async function chooseRunner(o: LocalOptions): Promise<{ runnerFor: (root: string) => CommandRunner; mode: 'bwrap' | 'off' }> {
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
