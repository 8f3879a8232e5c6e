// The work behind `acia runs` and `acia show`.
import { forTerminal } from '../core/text/terminal.js';
import { join, resolve } from 'node:path';
import * as nodeFs from 'node:fs';
import { AciaError, errorMessage } from '../core/errors.js';
import { requireRunDir } from '../core/contain/acia-state.js';
import { BlobStore } from '../core/ledger/blob-store.js';
import type { EntryOf, LedgerEntry } from '../core/ledger/entry.js';
import { listRuns } from '../core/ledger/manifest.js';
import { readLedgerEntries } from '../core/ledger/line-reader.js';
import { systemClock } from '../core/acm/ids.js';
import { Git, repoRoot } from '../team/git.js';
import { foldRun } from '../team/run-state.js';
import { roleCostLine, roleCosts } from '../core/run/state.js';
import { listRunStatuses } from '../team/run-status.js';
import { judgeRun } from '../team/outcome.js';
import { describeEntry } from '../app/describe.js';

export async function resolveRun(dir: string, runId: string): Promise<{ repo: string; runDir: string }> {
  const repo = await repoRoot(new Git(systemClock), resolve(dir));
  return { repo, runDir: requireRunDir(repo, runId, { needLedger: true }) };
}

/** The run `acia show` shows when given no id: the one started last. */
export async function latestRunId(dir: string): Promise<string> {
  const repo = await repoRoot(new Git(systemClock), resolve(dir));
  const last = (await listRunStatuses(repo)).at(-1);
  if (last === undefined) throw new AciaError('RUN_NOT_FOUND', `no runs in ${repo} yet`, { hint: 'start one with `acia run "<task>"`, or try `acia demo`' });
  return last.runId;
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
  if (state.plan && state.started?.planOnly !== true) {
    // The outcome rule re-checked over the ledger, so a reader need not trust the recorded reason.
    const o = judgeRun(state);
    out.push(`outcome rule: ${o.verdict}${o.reasons.length > 0 ? ` — ${o.reasons.join('; ')}` : ''}`);
  }
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
  if (state.roleSpend.size > 0) out.push(`cost by role: ${roleCostLine(roleCosts(state))}`);
  for (const m of state.messages) out.push(`message ${m.id} from ${m.author} to ${m.to === 'pm' ? 'the PM' : m.to} (${m.mode}): ${m.refused !== null ? `refused: ${m.refused}` : m.delivered ? `delivered to ${m.delivered.caller} at turn ${m.delivered.turn} (${m.delivered.at})` : 'not delivered yet'}`);
  out.push('', 'ledger:');
  for (const e of entries) out.push(`  ${String(e.seq).padStart(4)} ${e.actor.padEnd(12)} ${describeEntry(e)}`);
  // Goal, rationale and entries hold model and repository text: no terminal controls get through.
  process.stdout.write(`${forTerminal(out.join('\n'), { newlines: true })}\n`);
}

/**
 * The repository root for a command's --repo (any directory inside it), like git itself. With
 * `lenient`, a directory outside any repository is used as it is (for commands that still make sense there).
 */
export async function repoOf(dir: string, lenient = false): Promise<string> {
  try {
    return await repoRoot(new Git(systemClock), resolve(dir));
  } catch (e) {
    if (lenient) return resolve(dir);
    throw e;
  }
}

/**
 * `acia show <run> --output <seq|task>`: the stored output of a tool result or verification — the text
 * the agent saw — by ledger seq (a TOOL_CALL seq finds its result), or every one of a task's in order.
 */
export async function showOutputCommand(dir: string, runId: string, which: string): Promise<void> {
  const { runDir } = await resolveRun(dir, runId);
  const entries = await readEntries(runDir);
  const blobs = new BlobStore(join(runDir, 'blobs'), nodeFs.promises);
  let picked: WithOutput[];
  if (/^\d+$/.test(which)) {
    const e = entries.find((x) => x.seq === Number(which));
    if (!e) throw new AciaError('INPUT_INVALID', `run ${runId} has no ledger entry ${which} (it has ${entries.length})`);
    const callId = e.type === 'TOOL_CALL' ? e.data.toolUseId : undefined;
    const target = callId === undefined ? e : entries.find((x) => x.type === 'TOOL_RESULT' && x.data.toolUseId === callId);
    if (!target || !hasOutput(target)) {
      throw new AciaError('INPUT_INVALID', `ledger entry ${which} is a ${e.type}${callId !== undefined ? ' with no result yet' : ''}, which has no output`, {
        hint: 'pick the seq of a TOOL_CALL, TOOL_RESULT or VERIFICATION (see `acia show <run>`), or a task id',
      });
    }
    picked = [target];
  } else {
    picked = entries.filter(hasOutput).filter((x) => x.data.taskId === which);
    if (picked.length === 0) {
      const known = [...new Set(entries.filter(hasOutput).map((x) => x.data.taskId).filter((t) => t !== undefined))];
      throw new AciaError('INPUT_INVALID', `run ${runId} has no tool output for ${JSON.stringify(which)}`, { hint: `a ledger seq, or one of the tasks: ${known.join(', ') || 'none'}` });
    }
  }
  for (const e of picked) {
    const ref = e.data.outputRef;
    let text: string;
    try {
      const body = JSON.parse((await blobs.get(ref)).toString('utf8')) as { forModel?: unknown };
      text = typeof body.forModel === 'string' ? body.forModel : '';
    } catch (err) {
      text = `(output unavailable: ${errorMessage(err)})`;
    }
    if (picked.length > 1 || process.stdout.isTTY) process.stdout.write(`--- seq ${e.seq} ${e.actor}: ${describeEntry(e)}\n`);
    process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }
}

type WithOutput = EntryOf<'TOOL_RESULT'> | EntryOf<'VERIFICATION'>;

function hasOutput(e: LedgerEntry): e is WithOutput {
  return e.type === 'TOOL_RESULT' || e.type === 'VERIFICATION';
}
