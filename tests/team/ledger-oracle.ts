// An oracle for the executor's decisions, re-derived from a run's raw ledger entries alone (no fold, no
// scheduler): what every guard should have said over the recorded outputs and policy responses, which
// skips the joins allow, and which verification expressions a completed task must have passed. The
// outcome property test checks every generated run against it, so a broken guard, join or check fails it.
import type { Edge, Join, Plan, PlanSet, TaskSpec } from '../../src/core/acm/contracts.js';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { evaluateGuard, parseGuard } from '../../src/core/acm/guard.js';

const dataOf = <T>(e: LedgerEntry) => e.data as T;
type Out = Record<string, unknown>;

/** The plan in force at the end (one plan per generated run), with the tasks and edges added while it ran. */
export function finalPlan(entries: readonly LedgerEntry[]): Plan | null {
  let planSet: PlanSet | null = null;
  let plan: Plan | null = null;
  for (const e of entries) {
    if (e.type === 'PLAN_PROPOSED' && dataOf<{ valid: boolean }>(e).valid) planSet = dataOf<{ planSet: PlanSet }>(e).planSet;
    if (e.type === 'PLAN_SELECTED' || e.type === 'REPLAN_TRIGGERED') {
      const id = e.type === 'PLAN_SELECTED' ? dataOf<{ planId: string }>(e).planId : dataOf<{ toPlanId: string }>(e).toPlanId;
      plan = structuredClone(planSet!.plans.find((p) => p.id === id)!);
    }
    if (e.type === 'TASK_ADDED' && plan) {
      const d = dataOf<{ task: TaskSpec; edges: Edge[] }>(e);
      plan.tasks.push(d.task);
      plan.edges.push(...d.edges);
    }
  }
  return plan;
}

/** Task id -> the task that replaced it (a re-verification or merge task), as recorded. */
function replacements(entries: readonly LedgerEntry[]): Map<string, string> {
  const replaced = new Map<string, string>();
  for (const e of entries) {
    if (e.type !== 'TASK_ADDED') continue;
    const d = dataOf<{ task: { id: string }; replaces?: string }>(e);
    if (d.replaces) replaced.set(d.replaces, d.task.id);
  }
  return replaced;
}

/** What the ledger says about each task up to (not including) `seq`. */
function snapshot(entries: readonly LedgerEntry[], seq: number) {
  const outputs = new Map<string, Out>();
  const status = new Map<string, string>();
  const posts = new Map<string, { allow: boolean }[]>();
  const last = new Map<string, { allow: boolean }>();
  let admit: { allow: boolean } | null = null;
  for (const e of entries) {
    if (e.seq >= seq) break;
    const id = (e.data as { taskId?: string } | null)?.taskId;
    if (e.type === 'TASK_COMPLETED' && id) {
      outputs.set(id, dataOf<{ output: Out }>(e).output);
      status.set(id, 'completed');
    }
    if (e.type === 'TASK_FAILED' && id) status.set(id, 'failed');
    if (e.type === 'TASK_SKIPPED' && id) status.set(id, `skipped:${String(dataOf<{ cause?: string }>(e).cause)}`);
    if (e.type === 'TASK_STARTED' && id) status.set(id, 'running');
    if (e.type === 'POLICY_DECISION') {
      const d = dataOf<{ hook: string; taskId?: string; response: { allow: boolean } }>(e);
      if (d.hook === 'plan.admit') admit = d.response;
      if (d.taskId === undefined) continue;
      last.set(d.taskId, d.response);
      if (d.hook === 'task.post') posts.set(d.taskId, [...(posts.get(d.taskId) ?? []), d.response]);
    }
    if (e.type === 'HUMAN_RESPONSE' && dataOf<{ action: string }>(e).action === 'skip') {
      const esc = entries.find((x) => x.seq === dataOf<{ escalationSeq: number }>(e).escalationSeq);
      const t = esc ? dataOf<{ taskId?: string }>(esc).taskId : undefined;
      if (t) status.set(t, 'skipped:human');
    }
  }
  /** The PDP's word on a task as a guard sees it: a denied result stays denied (a human override is no allow). */
  const policy = (id: string): { allow: boolean } | null => ((posts.get(id) ?? []).some((p) => !p.allow) ? { allow: false } : (last.get(id) ?? admit));
  return { outputs, status, policy };
}

/**
 * The first decision the raw ledger contradicts, or null. Holds for every run, whatever its outcome: a
 * guard's recorded value and the policy it saw, a skip's cause against the joins and guards of the
 * edges into it, and the verification of every completed task.
 */
export function decisionViolation(entries: readonly LedgerEntry[]): string | null {
  const plan = finalPlan(entries);
  if (!plan) return null;
  const replaced = replacements(entries);
  const resolve = (id: string): string => (replaced.has(id) ? resolve(replaced.get(id)!) : id);
  const facts = {};

  for (const e of entries) {
    if (e.type !== 'BRANCH_TAKEN') continue;
    const b = dataOf<{ from: string; to: string; guard: string; value: boolean; onError?: string; policy?: { allow: boolean } }>(e);
    if (b.onError !== undefined) continue;
    const snap = snapshot(entries, e.seq);
    const tasks: Record<string, unknown> = {};
    for (const t of plan.tasks) {
      const own = snap.outputs.get(t.id);
      const eff = snap.outputs.get(resolve(t.id));
      if (own || eff) tasks[t.id] = { ...(own ?? {}), ...(eff ?? {}) };
    }
    const policy = snap.policy(resolve(b.from)) ?? snap.policy(b.from);
    const want = evaluateGuard(parseGuard(b.guard), { tasks, context: { facts }, policy: policy ?? {} });
    if (want !== b.value) return `guard ${b.from}->${b.to} "${b.guard}" recorded ${String(b.value)}, the ledger says ${String(want)} (policy ${JSON.stringify(policy)})`;
    if (b.policy !== undefined && policy !== null && b.policy.allow !== policy.allow) return `guard ${b.from}->${b.to} saw policy.allow ${String(b.policy.allow)}, the recorded decision is ${String(policy.allow)}`;
  }

  for (const e of entries) {
    if (e.type !== 'TASK_SKIPPED') continue;
    const { taskId, cause } = dataOf<{ taskId: string; cause?: string }>(e);
    if (cause === 'human') continue;
    const snap = snapshot(entries, e.seq);
    const join: Join | undefined = plan.joins.find((j) => j.task === taskId);
    const incoming = plan.edges.filter((x) => x.to === taskId && x.onError === undefined);
    const taken = incoming.filter((x) => {
      const s = snap.status.get(resolve(x.from));
      if (s !== 'completed' && s !== 'skipped:human') return false;
      if (x.guard === undefined) return true;
      const b = entries.find((y) => y.seq < e.seq && y.type === 'BRANCH_TAKEN' && dataOf<{ from: string; to: string }>(y).from === x.from && dataOf<{ to: string }>(y).to === x.to);
      return b !== undefined && dataOf<{ value: boolean }>(b).value;
    });
    const waited = join?.mode === 'any' ? taken.filter((x) => join.waitFor.includes(x.from)) : taken;
    // A join 'any' runs once one branch it waits for is taken: nothing upstream may skip it after that.
    if (join?.mode === 'any' && waited.length > 0) return `${taskId} joins any of its branches and ${waited[0]!.from} -> ${taskId} was taken, yet it was skipped (${String(cause)})`;
    if (incoming.length > 0 && taken.length === incoming.length) return `every branch into ${taskId} was taken, yet it was skipped (${String(cause)})`;
    if (cause === 'guard' && taken.length > 0) return `${taskId} was skipped as guarded although ${taken[0]!.from} -> ${taskId} was taken`;
    if (cause === 'join' && taken.length === 0) return `${taskId} was skipped as an unmet join although no branch reached it`;
  }

  for (const t of plan.tasks) {
    if (t.verification.length === 0) continue;
    const done = entries.filter((e) => e.type === 'TASK_COMPLETED' && dataOf<{ taskId: string; reusedFrom?: string }>(e).taskId === t.id && dataOf<{ reusedFrom?: string }>(e).reusedFrom === undefined).at(-1);
    if (!done) continue;
    const started = entries.filter((e) => e.type === 'TASK_STARTED' && e.seq < done.seq && dataOf<{ taskId: string }>(e).taskId === t.id).at(-1);
    for (const expr of t.verification) {
      const v = entries.find((e) => e.type === 'VERIFICATION' && e.seq > (started?.seq ?? -1) && e.seq < done.seq && dataOf<{ taskId: string; command: string; source: string }>(e).taskId === t.id && dataOf<{ command: string }>(e).command === expr);
      if (!v) return `${t.id} completed without evaluating its verification ${expr}`;
      if (!dataOf<{ passed: boolean }>(v).passed) return `${t.id} completed although its verification ${expr} was false`;
    }
  }
  return null;
}
