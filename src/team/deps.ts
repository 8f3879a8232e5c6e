// Everything the team needs from lower layers, injected so tests can pass a scripted model, a fixed
// clock, fixed ids or a fake runner, and replay can pass recorded ones.
import type { AgentApi } from './agents-acp/proxy-common.js';
import type { EnvironmentFacts } from '../core/tools/test-command.js';
import type * as NodeFs from 'node:fs';
import type { LedgerHead } from '../core/ledger/types.js';
import type { CapabilityMap, Plan, StreamChunk } from '../core/acm/contracts.js';
import type { LedgerEntry } from '../core/ledger/entry.js';
import type { LiveRun } from '../core/wiki/render.js';
import type { RunState } from '../core/run/state.js';
import type { Clock, IdSource } from '../core/acm/ids.js';
import type { Config } from '../core/config/schema.js';
import type { RunLedger } from '../core/ledger/types.js';
import type { LlmClient, LlmRequest, LlmToolSpec, Usage } from '../core/llm/types.js';
import type { PolicyEngine } from '../core/policy/policy.js';
import type { HookSource } from '../core/hooks/source.js';
import type { CommandRunner, Tool } from '../core/tools/types.js';
import type { McpToolSource } from '../core/tools/mcp/catalog.js';
import type { EscalationReason, HumanAction, RunManifest } from '../core/ledger/run-vocabulary.js';
import type { BudgetGate } from './budget.js';
import type { GuardEvaluator } from './scheduler.js';
import type { RepoReader } from '../agents/pm/context-packet.js';
import type { CallTool } from './toolbox.js';
import type { RunWorkspace } from './workspace.js';
import type { RunContext } from './run-context.js';
import type { TaskOutcome } from './task-common.js';
import type { Mailbox } from './mailbox.js';
import type { RoleCatalog } from './roles.js';
import type { CancelWatcher } from './cancel.js';

export interface EscalationQuestion {
  runId: string;
  reason: EscalationReason;
  taskId: string | undefined;
  message: string;
  lastFailure: string | undefined;
  options: HumanAction[];
  /** A plan approval: the plan the PM chose, which `edit` starts from. */
  plan?: Plan;
  /** A plan approval: every proposed plan (what `switch` may pick), for front ends that show them. */
  plans?: Plan[];
  /** Why the last answer to this question was refused (an invalid edit): shown before asking again. */
  problem?: string;
}
export interface HumanAnswer {
  action: HumanAction;
  text?: string;
}
/** Asks a human. Returns null when nobody can answer now (no TTY): the run then stops with exit 3. */
export interface Escalator {
  ask(question: EscalationQuestion): Promise<HumanAnswer | null>;
}
export const noHuman: Escalator = { ask: () => Promise.resolve(null) };

/** An entry as recorded, with the run state the reducer folded it into (read it, never change it); or a stream chunk. */
export type TeamEvent = { kind: 'entry'; entry: LedgerEntry; state: Readonly<RunState> } | { kind: 'chunk'; chunk: StreamChunk };

/** The model a run talks to, and how its calls are priced. */
export interface ModelDeps {
  client: LlmClient;
  /** Provider-local model id. */
  id: string;
  /** As the user wrote it, e.g. `anthropic:claude-sonnet-5-5`. */
  spec: string;
  costUsd: (model: string, usage: Usage) => number | null;
  estimate: (model: string, request: LlmRequest) => { usd: number | null; tokens: number };
  /**
   * Per model API, the endpoint and key external ACP agents' calls are forwarded to by the metering proxy
   * (the agents themselves never see the key).
   */
  /**
   * The model deps for another model spec (a role's own model); `id`, when given, is the id its requests
   * carried as recorded (a replay). Absent: every role uses this model.
   */
  forSpec?: (spec: string, id: string | null) => Promise<ModelDeps>;
  endpoints: Partial<Record<AgentApi, AgentEndpoint>>;
}

export interface AgentEndpoint {
  baseURL: string;
  apiKey: string | undefined;
  /** Where the user sets the key (`OPENAI_API_KEY`), for the message when it is missing or refused. */
  keyVar: string;
}

/** What agents act with: the built-in tools, MCP servers' tools, and the sandbox they run in. */
export interface ToolDeps {
  /** The sandboxed command runner for one worktree (nothing outside `root` is writable). */
  runnerFor: (root: string) => CommandRunner;
  /** What the user's checkout has installed that its files do not say (its virtualenv), for test command detection. */
  environment: (repo: string) => EnvironmentFacts;
  fs: typeof NodeFs;
  /** Every built-in tool: the implementations of the tools agent definitions name. */
  builtin: readonly Tool[];
  /** MCP servers' tools for this run (`noMcp` when there are none); replay passes the recorded catalog. */
  mcp: McpToolSource;
  toSpec: (tool: Tool) => LlmToolSpec;
  call: CallTool;
}

/** Where a run's record lives: the ledger, manifest, bundle and anchor, the wiki, and the git side. */
export interface StoreDeps {
  openLedger: (runDir: string, runId: string, opts: { create: boolean }) => Promise<RunLedger>;
  writeManifest: (runDir: string, manifest: RunManifest) => Promise<void>;
  /**
   * Writes the run's replay bundle when a session ends, before the manifest marks it finished; a failure
   * ends the session in error. A fleet run's orchestrator writes it into its worker's own directory, a
   * fleet task job and replay write none (`noBundle`).
   */
  writeBundle: (repo: string, runId: string, manifest: RunManifest, ledger: RunLedger) => Promise<void>;
  /**
   * The run's head anchored outside the checkout (the user's state directory). `write` follows every
   * manifest write, and once before the first entry; `check` refuses to resume a run that is not anchored
   * there or whose ledger no longer matches it. Replay, which touches no repository, anchors nothing.
   */
  anchor: {
    write: (runDir: string, runId: string, head: LedgerHead | null, status: string) => Promise<void>;
    check: (runDir: string, runId: string) => Promise<void>;
  };
  /** The git side of a run (worktrees, checkpoints, merges); replay's serves recorded outcomes. */
  workspace: (repo: string, runId: string) => RunWorkspace;
  /** Where the Context Packet is read from (the repository at the base commit); replay's is the recorded packet. */
  repoReader: (repo: string, commit: string, workspace: RunWorkspace) => RepoReader;
  /** Reads memory pages for the context packet. */
  readMemory: (repo: string) => Promise<{ page: string; content: string }[]>;
  /** The memory pages agents' lessons are appended to; replay passes one that serves the recorded pages. */
  memoryPages: { read: (repo: string, page: string) => Promise<Buffer | null>; write: (repo: string, page: string, content: string) => Promise<void> };
  /**
   * Renders the wiki after a run stops; failures are reported, not fatal. `live` is that run as its ledger
   * holds it in memory (read instead of its file when the file holds exactly those entries).
   */
  renderWiki: (repo: string, live: LiveRun | null) => Promise<void>;
}

/** Who decides: policy, the human, guards, and what a valid plan is. */
export interface GovernanceDeps {
  policy: PolicyEngine;
  escalator: Escalator;
  evalGuard: GuardEvaluator;
  capabilityMap: CapabilityMap;
  /** Problems with a plan set (schema, references, cycles...), empty when valid. */
  /** `facts`: the run's Context Packet facts; what the plan's expressions read must be among them. */
  validatePlanSet: (planSet: unknown, facts?: Record<string, unknown>) => { path: string; message: string }[];
  /** The user's hooks (docs/hooks.md): live, or a replay's recorded decisions; `noHooks` when none are configured. */
  hooks: HookSource;
}

/** Time, ids, cancellation and progress: what tests and replay fix to make a run deterministic. */
export interface RuntimeDeps {
  clock: Clock;
  ids: IdSource;
  sleep: (ms: number) => Promise<void>;
  /** Stops the run after its current step (Ctrl-C, a server's cancel); one that never aborts otherwise. */
  signal: AbortSignal;
  /**
   * Watches for a request to cancel the run (`acia cancel`) while a session runs it: the CLI's watches
   * the request file beside the ledger, a fleet worker's the run's row; replay's is never cancelled.
   */
  cancelWatch: CancelWatcher;
  onEvent: (event: TeamEvent) => void;
  aciaVersion: string;
  /** Where a session's messages from humans come from (default: the run's inbox, polled); replay passes the recorded ones. */
  mailbox?: () => Mailbox;
}

/** Where a run's work happens and whose money it spends: this process, or a fleet of workers sharing a database. */
export interface FleetDeps {
  /**
   * Runs a dev task and returns its outcome once the task's entries are in this run's ledger and its
   * merge is on the run branch: in this process (`runDevTask`), or on another fleet worker.
   */
  dispatchTask: (ctx: RunContext, taskId: string) => Promise<TaskOutcome>;
  /** This process's name in the fleet, recorded on each task attempt it runs; null for a local run. */
  workerName: string | null;
  /** The run's cost and token budget: this process's own holds (a local run), or the fleet's shared one. */
  budgetGate: BudgetGate;
}

/** Everything a run needs from outside the team, in six cohesive parts beside the resolved config. `createDeps` (src/app) makes each mode's. */
export interface TeamDeps {
  config: Config;
  model: ModelDeps;
  tools: ToolDeps;
  store: StoreDeps;
  governance: GovernanceDeps;
  runtime: RuntimeDeps;
  fleet: FleetDeps;
  /** Role files and skills found for this run (team/roles.ts); absent: the built-in roles, unrecorded. */
  roles?: RoleCatalog;
}
