// A realistic finished run written through the real ledger: shared by ledger, wiki, bundle and e2e tests.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalJson, contentAddress } from '../../src/core/acm/canonical-json.js';
import type { Clock } from '../../src/core/acm/ids.js';
import { openRunLedger } from '../../src/core/ledger/file-ledger.js';
import { runDirOf, writeManifest } from '../../src/core/ledger/manifest.js';
import { writeAnchor } from '../../src/core/ledger/anchor.js';
import type { RunLedger } from '../../src/core/ledger/types.js';

export function tempDir(prefix = 'acia-ledger-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A clock that ticks one second per call from a fixed instant, so runs are byte-identical. */
export function fixedClock(start = Date.UTC(2026, 0, 2, 3, 4, 5)): Clock {
  let t = start;
  return {
    now: () => {
      const d = new Date(t);
      t += 1000;
      return d;
    },
  };
}

export interface SampleRunOptions {
  runId?: string;
  /** 'succeeded' writes RUN_COMPLETED and the manifest head; 'awaiting_human' stops at an escalation. */
  outcome?: 'succeeded' | 'awaiting_human' | 'running';
  /** false: no anchor in the state directory, as for a run planted by a clone. */
  anchor?: boolean;
}

export async function writeSampleRun(repoRoot: string, options: SampleRunOptions = {}): Promise<{ runId: string; runDir: string }> {
  const runId = options.runId ?? '20260102-030405-abc123';
  const outcome = options.outcome ?? 'succeeded';
  const runDir = runDirOf(repoRoot, runId);
  const clock = fixedClock();
  const ledger = await openRunLedger(runDir, runId, { clock, create: true });
  await fillRun(ledger, outcome);
  const head = ledger.head();
  const started = ledger.entries()[0]!.ts;
  await ledger.close();
  await writeManifest(runDir, {
    runId,
    status: outcome === 'running' ? 'running' : outcome,
    goal: 'add a --json flag to the export command',
    head: outcome === 'running' ? null : head,
    startedAt: started,
    updatedAt: started,
    costUsd: 0.0123,
    runBranch: `acia/${runId}`,
  });
  // As ACIA does for a run it records: the head anchored in the user's state directory (the test's own).
  if (options.anchor !== false) writeAnchor(process.env, runDir, runId, head, outcome, new Date(started));
  return { runId, runDir };
}

const usage = { inputTokens: 100, outputTokens: 50, cacheReadTokens: 0, cacheWriteTokens: 0 };

async function fillRun(ledger: RunLedger, outcome: 'succeeded' | 'awaiting_human' | 'running'): Promise<void> {
  const goal = { id: 'G1', intent: 'add a --json flag to the export command', constraints: {}, contextRequired: true };
  await ledger.append({
    actor: 'team',
    type: 'RUN_STARTED',
    data: {
      goal, repo: '/repo', baseCommit: 'a'.repeat(40), baseBranch: 'main', runBranch: `acia/${ledger.runId}`, model: 'scripted:demo',
      settings: { parallel: 2, maxIterations: 3, sandbox: 'off', budget: { maxCostUsd: 1 } }, aciaVersion: '0.1.0',
    },
  });
  const packet = { id: 'ctx-1', goalId: 'G1', files: ['src/export.ts'] };
  const packetRef = await ledger.putBlob(canonicalJson(packet));
  const contextRef = contentAddress(packet);
  await ledger.append({ actor: 'pm', type: 'CONTEXT_BUILT', data: { contextRef, packetRef, summary: '1 file, tests: npm test' } });
  const plan = (id: string, withQa: boolean) => ({
    id, goalId: 'G1', contextRef, capabilityMapVersion: 'acia-1', rationale: `${id} rationale`,
    tasks: [
      { id: 't1', capability: 'dev.implement', title: 'Add --json flag', input: {}, verification: [] },
      ...(withQa ? [{ id: 't2', capability: 'qa.verify', title: 'Run the tests', input: {}, verification: [] }] : []),
    ],
    edges: withQa ? [{ from: 't1', to: 't2', guard: '$t1.ok == true' }, { from: 't2', to: 't1', onError: 'RETRYABLE_ERROR' }] : [],
    joins: [],
  });
  const planSet = { goalId: 'G1', contextRef, plans: [plan('plan-A', true), plan('plan-B', false)], selection: { method: 'llm', chosenPlanId: 'plan-A', rationale: 'A verifies' } };
  const responseRef = await ledger.putBlob('{"role":"assistant","content":"plans"}');
  await ledger.append({ actor: 'pm', type: 'LLM_CALL', data: { caller: 'pm', model: 'scripted:demo', requestHash: await ledger.putBlob(canonicalJson({ q: 1 })), responseRef, usage, costUsd: 0.01, stopReason: 'tool_use', durationMs: 12 } });
  await ledger.append({ actor: 'pm', type: 'PLAN_PROPOSED', data: { attempt: 1, planSet, valid: true, problems: [] } });
  await ledger.append({ actor: 'policy', type: 'POLICY_DECISION', data: { hook: 'plan.admit', request: { plan: 'plan-A' }, response: { allow: true, reason: 'within budget' } } });
  await ledger.append({ actor: 'pm', type: 'PLAN_SELECTED', data: { planId: 'plan-A', method: 'llm', rationale: 'Plan-A runs QA after the change', alternatives: ['plan-B'] } });
  await ledger.append({ actor: 'dev:t1', type: 'TASK_STARTED', data: { taskId: 't1', attempt: 1, capability: 'dev.implement' } });
  await ledger.append({ actor: 'dev:t1', type: 'TOOL_CALL', data: { taskId: 't1', toolUseId: 'tu1', name: 'write_file', input: { path: 'src/export.ts' } } });
  const outputRef = await ledger.putBlob('wrote 120 bytes');
  await ledger.append({ actor: 'dev:t1', type: 'TOOL_RESULT', data: { taskId: 't1', toolUseId: 'tu1', name: 'write_file', ok: true, outputRef, durationMs: 3 } });
  await ledger.append({ actor: 'dev:t1', type: 'TASK_COMPLETED', data: { taskId: 't1', attempt: 1, output: { ok: true }, summary: 'added the flag' } });
  await ledger.append({ actor: 'team', type: 'BRANCH_TAKEN', data: { from: 't1', to: 't2', guard: '$t1.ok == true', value: true } });
  await ledger.append({ actor: 'qa:t2', type: 'TASK_STARTED', data: { taskId: 't2', attempt: 1, capability: 'qa.verify' } });
  const testOut = await ledger.putBlob('1 failed, 3 passed');
  await ledger.append({ actor: 'qa:t2', type: 'VERIFICATION', data: { taskId: 't2', passed: outcome === 'succeeded', exitCode: outcome === 'succeeded' ? 0 : 1, command: 'npm test', passedCount: 3, failedCount: outcome === 'succeeded' ? 0 : 1, outputRef: testOut, source: 'qa_run' } });
  if (outcome === 'running') return;
  if (outcome === 'awaiting_human') {
    await ledger.append({ actor: 'team', type: 'ESCALATION_REQUESTED', data: { reason: 'fixes_exhausted', taskId: 't2', message: 'tests still fail after 3 fixes', lastFailure: 'expected "json" got "csv"', options: ['guidance', 'retry', 'abort'] } });
    await ledger.append({ actor: 'team', type: 'RUN_COMPLETED', data: { reason: 'awaiting_human', message: 'waiting for an answer', runBranch: `acia/${ledger.runId}`, headCommit: null, filesChanged: ['src/export.ts'], costUsd: 0.0123, tokens: 150, durationMs: 5000 } });
    return;
  }
  await ledger.append({ actor: 'qa:t2', type: 'TASK_COMPLETED', data: { taskId: 't2', attempt: 1, output: { passed: true }, summary: '3 passed' } });
  await ledger.append({ actor: 'team', type: 'RUN_COMPLETED', data: { reason: 'succeeded', message: 'all tasks passed', runBranch: `acia/${ledger.runId}`, headCommit: 'b'.repeat(40), filesChanged: ['src/export.ts'], costUsd: 0.0123, tokens: 150, durationMs: 5000 } });
}
