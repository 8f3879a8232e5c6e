// The work behind `acia runs` and `acia show`.
import { forTerminal } from '../core/text/terminal.js';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AciaError } from '../core/errors.js';
import type { LedgerEntry } from '../core/acm/contracts.js';
import { listRuns } from '../core/ledger/manifest.js';
import { readLedgerEntries } from '../core/ledger/line-reader.js';
import { systemClock } from '../core/acm/ids.js';
import { Git, repoRoot } from '../team/git.js';
import { foldRun } from '../team/run-state.js';
import { describeEntry } from './describe.js';

export async function resolveRun(dir: string, runId: string): Promise<{ repo: string; runDir: string }> {
  const repo = await repoRoot(new Git(systemClock), resolve(dir));
  const runDir = join(repo, '.acia', 'runs', runId);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(runId) || !existsSync(join(runDir, 'ledger.jsonl'))) {
    throw new AciaError('RUN_NOT_FOUND', `no run ${runId} in ${repo}`, { hint: 'list runs with `acia runs`' });
  }
  return { repo, runDir };
}

export async function readEntries(runDir: string): Promise<LedgerEntry[]> {
  const out: LedgerEntry[] = [];
  for await (const e of readLedgerEntries(join(runDir, 'ledger.jsonl'))) out.push(e);
  return out;
}

export async function listRunsCommand(dir: string, json: boolean): Promise<void> {
  const repo = await repoRoot(new Git(systemClock), resolve(dir));
  const runs = await listRuns(repo);
  if (json) {
    process.stdout.write(`${JSON.stringify(runs, null, 2)}\n`);
    return;
  }
  if (runs.length === 0) {
    process.stdout.write('no runs yet; start one with `acia run "<task>"` or try `acia demo`\n');
    return;
  }
  process.stdout.write(`${'RUN'.padEnd(24)} ${'STATUS'.padEnd(20)} ${'COST'.padStart(9)} ${'TIME'.padStart(7)}  GOAL\n`);
  for (const r of runs) {
    const secs = Math.max(0, (Date.parse(r.updatedAt) - Date.parse(r.startedAt)) / 1000);
    const cost = r.costUsd === null ? '?' : `$${r.costUsd.toFixed(3)}`;
    process.stdout.write(`${r.runId.padEnd(24)} ${r.status.padEnd(20)} ${cost.padStart(9)} ${`${secs.toFixed(0)}s`.padStart(7)}  ${forTerminal(r.goal).slice(0, 60)}\n`);
  }
}

export async function showRunCommand(dir: string, runId: string, json: boolean): Promise<void> {
  const { runDir } = await resolveRun(dir, runId);
  const entries = await readEntries(runDir);
  if (json) {
    for (const e of entries) process.stdout.write(`${JSON.stringify(e)}\n`);
    return;
  }
  const state = foldRun(entries);
  const out: string[] = [];
  out.push(`run ${runId}: ${state.completed?.reason ?? 'running or interrupted'}`);
  out.push(`goal: ${state.started?.goal.intent ?? '?'}`);
  if (state.plan) {
    out.push(`plan ${state.plan.id}: ${state.plan.rationale}`);
    for (const [id, t] of state.tasks) {
      const v = t.lastVerification;
      const verdict = v && v.source !== 'check' ? ` — tests ${v.passed ? 'passed' : 'FAILED'} (exit ${String(v.exitCode)})` : '';
      out.push(`  ${t.status.padEnd(9)} ${id} ${t.spec.capability} attempts ${t.attempts}${verdict}`);
    }
  }
  out.push(`cost: ${state.costKnown ? `$${state.costUsd.toFixed(4)}` : 'unknown'}, ${state.tokens} tokens, ${state.modelCalls} model calls`);
  out.push('', 'ledger:');
  for (const e of entries) out.push(`  ${String(e.seq).padStart(4)} ${e.actor.padEnd(12)} ${describeEntry(e)}`);
  // Goal, rationale and entries hold model and repository text: no terminal controls get through.
  process.stdout.write(`${forTerminal(out.join('\n'), { newlines: true })}\n`);
}
