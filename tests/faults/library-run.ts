// Runs the team through the library, as `acia demo` does: the fake Anthropic server serves a script to
// the real SDK. Seams (the ledger's fs, the team's sleep) can be swapped where a fault needs one.
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { systemClock } from '../../src/core/acm/ids.js';
import { loadConfig } from '../../src/core/config/load.js';
import { openRunLedger } from '../../src/core/ledger/file-ledger.js';
import type { LedgerFs } from '../../src/core/ledger/ledger-fs.js';
import { startFakeAnthropicServer, type RecordedRequest } from '../../src/core/llm/fake-server.js';
import { parseScript } from '../../src/core/llm/script.js';
import { createDeps } from '../../src/app/create-deps.js';
import { exitCodeForResult } from '../../src/cli/run-action.js';
import { noHuman, type TeamEvent } from '../../src/team/deps.js';
import { startRun, type RunResult } from '../../src/team/team.js';
import { GOAL, TEST_COMMAND } from './harness.js';

export interface LibraryRun {
  result: RunResult;
  exitCode: number;
  requests: RecordedRequest[];
  warnings: string[];
}

export async function runWithFakeServer(repo: string, script: unknown, opts: { ledgerFs?: LedgerFs; onEntry?: (entry: LedgerEntry) => void } = {}): Promise<LibraryRun> {
  const server = await startFakeAnthropicServer({ script: parseScript(script, 'fault script') });
  const warnings: string[] = [];
  try {
    const { config } = loadConfig({
      repo,
      env: {},
      userFile: null,
      flags: { model: 'anthropic:claude-sonnet-5-5', sandbox: 'off', testCommand: TEST_COMMAND, parallel: 2, maxIterations: 2 },
    });
    const deps = await createDeps({
      kind: 'local',
      repo,
      config,
      env: process.env,
      escalator: noHuman,
      warn: (m) => warnings.push(m),
      anthropic: { baseURL: server.url, apiKey: 'fault-suite-key' },
      ...(opts.onEntry ? { onEvent: (ev: TeamEvent) => (ev.kind === 'entry' ? opts.onEntry?.(ev.entry) : undefined) } : {}),
    });
    const ledgerFs = opts.ledgerFs;
    const result = await startRun(
      {
        ...deps,
        // Task-level retry backoff is not what these tests measure.
        runtime: { ...deps.runtime, sleep: () => Promise.resolve() },
        store: {
          ...deps.store,
          ...(ledgerFs ? { openLedger: (runDir: string, runId: string, o: { create: boolean }) => openRunLedger(runDir, runId, { clock: systemClock, create: o.create, fs: ledgerFs }) } : {}),
        },
      },
      { dir: repo, goal: GOAL },
    );
    // Every request the team sent must have kept the request invariants (the server also failed it with a 400).
    if (server.violations.length > 0) throw new Error(`request invariants broken:\n${server.violations.join('\n')}`);
    return { result, exitCode: exitCodeForResult(result), requests: server.requests, warnings };
  } finally {
    await server.close();
  }
}
