// Property: over many generated small plans (random DAGs with guards, error edges, joins, failing and
// passing tasks, a human answering at random), whenever the executor reports `succeeded`, the outcome
// rule holds on the ledger — checked here from the raw entries, independently of the team's own fold —
// and in every run each guard value, join skip and verification is what the raw ledger says it must be
// (ledger-oracle.ts). scripts/mutation-check.mjs breaks guards, joins and checks and sees this fail.
import { describe, expect, it } from 'vitest';
import type { Edge, ErrorKind, Join } from '../../src/core/acm/contracts.js';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { decisionViolation, finalPlan } from './ledger-oracle.js';
import type { HumanAnswer } from '../../src/team/deps.js';
import { runPlanInProcess, scriptedHuman, type GeneratedPlan, type TaskPlan } from './inprocess.js';
import { rng } from '../helpers/rng.js';

function generate(seed: number): { plan: GeneratedPlan; answers: HumanAnswer[] } {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const n = 2 + Math.floor(r() * 5);
  const tasks: TaskPlan[] = [];
  for (let i = 0; i < n; i++) {
    const roll = r();
    const capability = roll < 0.6 ? 'dev.implement' : roll < 0.85 ? 'qa.verify' : 'qa.write_tests';
    const id = `t${i}`;
    const t: TaskPlan = { id, capability, ok: r() < 0.75, breaks: r() < 0.2, touchesProtected: r() < 0.12, attempts: r() < 0.2 ? 2 : 1 };
    if (r() < 0.25) t.verification = [capability === 'dev.implement' ? `$${id}.ok == true` : `$${id}.passedCount >= 3`];
    tasks.push(t);
  }
  const edges: Edge[] = [];
  for (let j = 1; j < n; j++) {
    for (let i = 0; i < j; i++) {
      if (r() > 0.45) continue;
      const src = tasks[i]!;
      const roll = r();
      if (roll < 0.15) edges.push({ from: src.id, to: `t${j}`, onError: pick<ErrorKind>(['RETRYABLE_ERROR', 'FATAL_ERROR', 'COMPENSATION_REQUIRED']) });
      else if (roll < 0.4) {
        const field = src.capability === 'dev.implement' ? 'ok' : 'passed';
        edges.push({ from: src.id, to: `t${j}`, guard: pick([`$${src.id}.${field} == true`, `$${src.id}.${field} != true`, 'policy.allow', '!policy.allow']) });
      } else edges.push({ from: src.id, to: `t${j}` });
    }
  }
  const joins: Join[] = [];
  for (const t of tasks) {
    const from = edges.filter((e) => e.to === t.id && e.onError === undefined).map((e) => e.from);
    if (from.length >= 2 && r() < 0.6) joins.push({ task: t.id, mode: r() < 0.5 ? 'any' : 'all', waitFor: from });
  }
  const answers: HumanAnswer[] = [];
  for (let k = 0; k < 3; k++) answers.push({ action: pick(['skip', 'retry', 'approve', 'guidance', 'skip'] as const), ...(r() < 0.3 ? { text: 'try again' } : {}) });
  return { plan: { tasks, edges, joins }, answers };
}

const dataOf = <T>(e: LedgerEntry) => e.data as T;

/** The outcome rule, re-derived from the entries alone. Returns the first violation, or null. */
function violation(entries: readonly LedgerEntry[]): string | null {
  const plan = finalPlan(entries);
  const started = entries.find((e) => e.type === 'RUN_STARTED');
  const base = started ? dataOf<{ baseCommit: string }>(started).baseCommit : '';
  if (!plan) return 'no plan';
  const replaced = new Map<string, string>();
  for (const e of entries) if (e.type === 'TASK_ADDED') {
    const d = dataOf<{ task: { id: string }; replaces?: string }>(e);
    if (d.replaces) replaced.set(d.replaces, d.task.id);
  }
  const last = new Map<string, LedgerEntry>();
  for (const e of entries) {
    if (!['TASK_COMPLETED', 'TASK_FAILED', 'TASK_SKIPPED', 'TASK_STARTED'].includes(e.type)) continue;
    last.set(dataOf<{ taskId: string }>(e).taskId, e);
  }
  const humanSkips = entries.filter((e) => e.type === 'HUMAN_RESPONSE' && dataOf<{ action: string }>(e).action === 'skip');
  if (humanSkips.length > 0) {
    // A skip answered for a task of the plan: that task was needed.
    for (const h of humanSkips) {
      const esc = entries.find((x) => x.seq === dataOf<{ escalationSeq: number }>(h).escalationSeq);
      const taskId = esc ? dataOf<{ taskId?: string }>(esc).taskId : undefined;
      if (taskId !== undefined && plan.tasks.some((t) => t.id === taskId)) return `human skipped ${taskId}`;
    }
  }
  const resolve = (id: string): string => (replaced.has(id) ? resolve(replaced.get(id)!) : id);
  const statusOf = (id: string): string => {
    const e = last.get(resolve(id));
    if (!e) return 'pending';
    if (e.type === 'TASK_SKIPPED') return `skipped:${String(dataOf<{ cause?: string }>(e).cause)}`;
    return e.type;
  };
  for (const t of plan.tasks) {
    if (replaced.has(t.id)) continue;
    const s = statusOf(t.id);
    if (s === 'TASK_COMPLETED') {
      for (const expr of t.verification) {
        const v = entries.filter((e) => e.type === 'VERIFICATION' && dataOf<{ taskId: string; command: string }>(e).taskId === t.id && dataOf<{ command: string }>(e).command === expr).at(-1);
        if (!v || !dataOf<{ passed: boolean }>(v).passed) return `expression ${expr} of ${t.id} did not hold`;
      }
      continue;
    }
    if (s !== 'skipped:guard') return `task ${t.id} is ${s}`;
    // A guard skip must be justified edge by edge: some way in was closed by a guard (or by the path a
    // guard closed), and none was closed by a failure or a skip upstream.
    let byGuard = 0;
    for (const edge of plan.edges.filter((x) => x.to === t.id)) {
      const src = statusOf(edge.from);
      const b = entries.find((e) => e.type === 'BRANCH_TAKEN' && dataOf<{ from: string; to: string }>(e).from === edge.from && dataOf<{ to: string }>(e).to === edge.to);
      const value = b ? dataOf<{ value: boolean }>(b).value : undefined;
      if (src === 'skipped:guard') byGuard++;
      else if (edge.onError !== undefined) {
        if (src === 'TASK_COMPLETED') byGuard++;
        else return `task ${t.id} was skipped though its error edge from ${edge.from} (${src}) was not closed by success`;
      } else if (src === 'TASK_COMPLETED' || src === 'skipped:human') {
        if (edge.guard !== undefined && value === false) byGuard++;
        else if (edge.guard !== undefined && value === undefined) return `guard ${edge.from}->${edge.to} was never recorded`;
      } else return `task ${t.id} was skipped behind ${edge.from}, which is ${src}`;
    }
    if (byGuard === 0) return `task ${t.id} was skipped with no guard closing a way in`;
  }
  let head = base;
  let mergeSeq = -1;
  for (const e of entries) {
    if (e.type === 'MERGE') {
      const d = dataOf<{ conflict: boolean; commit: string | null }>(e);
      if (!d.conflict && d.commit !== null && d.commit !== head) {
        head = d.commit;
        mergeSeq = e.seq;
      }
    }
  }
  const proof = entries.find((e) => {
    if (e.type !== 'VERIFICATION' || e.seq < mergeSeq) return false;
    const d = dataOf<{ source: string; exitCode: number | null; commit?: string }>(e);
    return d.source !== 'check' && d.exitCode === 0 && d.commit === head;
  });
  if (!proof) return `no passing test run on the final head ${head}`;
  return null;
}

describe('outcome property over generated plans', () => {
  it('whenever a run reports succeeded, the rule holds on its ledger; no routed run ends in error', async () => {
    const seen = { succeeded: 0, other: 0 };
    for (let seed = 1; seed <= 80; seed++) {
      const { plan, answers } = generate(seed);
      const { result, entries } = await runPlanInProcess(plan, { human: scriptedHuman(answers) });
      if (process.env.SHOW_REASONS) process.stderr.write(`${seed} ${result.reason} ${result.message.slice(0, 100)}\n`);
      const label = `seed ${seed}: ${JSON.stringify(plan)} -> ${result.reason}: ${result.message}`;
      expect(result.reason, label).not.toBe('error');
      // Every run, whatever its end: guards, joins, policy and checks as the raw ledger says they must be.
      expect(decisionViolation(entries), label).toBeNull();
      if (result.reason === 'succeeded') {
        seen.succeeded++;
        expect(violation(entries), label).toBeNull();
      } else seen.other++;
    }
    // The generator must exercise both sides of the property.
    expect(seen.succeeded).toBeGreaterThan(5);
    expect(seen.other).toBeGreaterThan(5);
  });
});
