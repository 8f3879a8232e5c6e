// What a mode passes for a part of the team's deps it does not have: explicit values, so the team never
// branches on whether a part is there (createDeps, src/app, puts them together per mode).
import type { McpToolSource } from '../core/tools/mcp/catalog.js';
import { LocalBudgetGate } from './budget.js';
import type { FleetDeps, StoreDeps } from './deps.js';
import { runDevTask } from './task-dev.js';
import type { Config } from '../core/config/schema.js';
import type { CancelWatcher } from './cancel.js';
import type { HookSource } from '../core/hooks/source.js';

/** No MCP server: an empty catalog, no tools for any role. */
export const noMcp: McpToolSource = {
  open: () => Promise.resolve({ servers: [] }),
  settle: () => Promise.resolve(null),
  unavailable: () => null,
  current: () => null,
  toolsFor: () => [],
  prewarm: () => undefined,
  release: () => Promise.resolve(),
  close: () => Promise.resolve(),
};

/** No bundle when a session ends: a fleet task job's (its run's orchestrator writes the run's), and replay's. */
export const noBundle: StoreDeps['writeBundle'] = () => Promise.resolve();

/** No anchor outside the checkout (replay touches no repository and records nothing of its own). */
export const noAnchor: StoreDeps['anchor'] = { write: () => Promise.resolve(), check: () => Promise.resolve() };

/** A signal for a run nothing will interrupt. */
export const neverAborted: AbortSignal = new AbortController().signal;

/** No way to cancel the run from outside (replay: a recording is not cancelled, its recorded cancel is replayed). */
export const neverCancelled: CancelWatcher = () => ({ signal: neverAborted, request: () => null, stop: () => undefined });

/** A run in this one process: dev tasks run here, the budget is this process's fold and holds. */
export function localFleet(config: Pick<Config, 'budget'>): FleetDeps {
  return { dispatchTask: runDevTask, workerName: null, budgetGate: new LocalBudgetGate(config.budget) };
}

/** No hook configured: none applies anywhere, so the team builds no occurrence. */
export const noHooks: HookSource = { has: () => false, decide: () => Promise.resolve([]) };
