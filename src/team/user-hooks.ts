// The user's hooks at the team's lifecycle points: the occurrence built from the run's recorded state, the
// decisions asked of the hook source (live hooks, or a replay's recording), each recorded as a
// POLICY_DECISION before the team acts on it, and one combined answer for the caller.
import { join } from 'node:path';
import { writableRoots } from '../core/contain/acia-state.js';
import { resolveInRoot } from '../core/sandbox/path-guard.js';
import type { TaskSpec } from '../core/acm/contracts.js';
import { NOTIFY_EVENTS, type HookEvent } from '../core/hooks/events.js';
import type { HookOccurrence } from '../core/hooks/occurrence.js';
import { LEDGER_FILE } from '../core/ledger/file-ledger.js';
import { dataOf } from '../core/ledger/entry.js';
import type { RunContext } from './run-context.js';
import type { ToolHooks } from './toolbox.js';
import type { TaskWorktree } from './workspace.js';
import type { ToolCall } from '../agents/agent-loop.js';

/** What the points' callers act on: the first denial (which hook, why), or an allow with any notes for the agent. */
export type HookAnswer = { allow: true; context: string[] } | { allow: false; hook: string; reason: string; stop: boolean };

const ALLOW: HookAnswer = { allow: true, context: [] };

/** The parts of an occurrence the point knows; the run's own facts are filled in here. */
export type PointFacts = Omit<HookOccurrence, 'ledgerPath' | 'ledgerSeq' | 'run' | 'plan'>;

/** Whether any hook may apply at `event`: callers build nothing when none can. */
export function hooksAt(ctx: RunContext, event: HookEvent): boolean {
  return ctx.deps.governance.hooks.has(event);
}

/**
 * Runs the hooks that apply at one occurrence (`at` names it, the same in every session and in a replay)
 * and records each decision. Never throws for a hook's sake: a hook that breaks is a recorded denial.
 */
export async function userHooks(ctx: RunContext, at: string, facts: PointFacts, o: { feedback?: boolean } = {}): Promise<HookAnswer> {
  const source = ctx.deps.governance.hooks;
  if (!source.has(facts.event)) return ALLOW;
  const started = ctx.state.started;
  const plan = ctx.state.plan;
  const occurrence: HookOccurrence = {
    ...facts,
    ledgerPath: join(ctx.runDir, LEDGER_FILE),
    ledgerSeq: ctx.state.lastSeq,
    run: { id: ctx.runId, goal: started?.goal.intent ?? '', branch: ctx.workspace.runBranch, baseCommit: started?.baseCommit ?? '' },
    plan: plan ? { id: plan.id, taskCount: plan.tasks.length } : null,
  };
  const decisions = await source.decide(occurrence, at, {
    runner: () => ctx.deps.tools.runnerFor(facts.cwd),
    writable: [...writableRoots(facts.cwd), ctx.repo],
    ...timeLeft(ctx, facts.event),
    // Ctrl-C stops a gate; a notification still reports (the interrupt is often what it reports).
    ...(ctx.deps.runtime.signal && !NOTIFY_EVENTS.has(facts.event) ? { signal: ctx.deps.runtime.signal } : {}),
    blob: (text) => ctx.rec.blob(text),
  });
  const context: string[] = [];
  for (const d of decisions) {
    const r = d.response as { allow: boolean; reason?: string; stop?: boolean; context?: string };
    // A denial the agent gets back to work on is no policy verdict on the task (the reducer reads this).
    const response = o.feedback === true && !r.allow && r.stop !== true ? { ...d.response, feedback: true } : d.response;
    await ctx.rec.record('policy', 'POLICY_DECISION', { hook: facts.event, ...(facts.task ? { taskId: facts.task.id } : {}), ...d, response });
    if (!r.allow) return { allow: false, hook: d.by.name, reason: r.reason ?? `hook ${d.by.name} denied`, stop: r.stop === true };
    if (typeof r.context === 'string') context.push(r.context);
  }
  return { allow: true, context };
}

/**
 * A gate stops at the run's --max-minutes like any command of it; a notification (escalation, run end)
 * has only its own timeout, since the moment it reports is often the budget running out.
 */
function timeLeft(ctx: RunContext, event: HookEvent): { timeoutMs?: number } {
  const maxMinutes = ctx.state.budgetWaived ? undefined : ctx.deps.config.budget.maxMinutes;
  if (maxMinutes === undefined || NOTIFY_EVENTS.has(event)) return {};
  return { timeoutMs: Math.max(1, ctx.sessionStartMs + maxMinutes * 60_000 - ctx.deps.runtime.clock.now().getTime()) };
}

/** The task part of an occurrence, from its spec and the recorded state. */
export function taskFacts(ctx: RunContext, spec: TaskSpec, attempt: number | null, worktree: string | null): NonNullable<HookOccurrence['task']> {
  const t = ctx.state.tasks.get(spec.id);
  return { id: spec.id, kind: spec.capability, title: spec.title ?? null, input: spec.input, attempt, branch: t?.branch ?? null, worktree };
}

/** The agent part: the ledger actor (`dev:t1`) names the teammate. */
export function agentFacts(actor: string, attempt: number | null): NonNullable<HookOccurrence['agent']> {
  const role = actor.split(':')[0];
  return { name: actor, role: role === 'pm' || role === 'dev' || role === 'qa' ? role : 'team', attempt };
}

/**
 * The hooks at one of ACM's policy points (plan.admit, task.pre, task.post), asked after the policy engine
 * allowed. They run in the task's worktree, or the run's for the plan and for tasks without one.
 */
export async function policyPointHooks(ctx: RunContext, point: 'plan.admit' | 'task.pre' | 'task.post', spec: TaskSpec | null, filesChanged?: string[]): Promise<HookAnswer> {
  if (!hooksAt(ctx, point)) return ALLOW;
  if (spec === null) await ctx.workspaceReady;
  const t = spec ? ctx.state.tasks.get(spec.id) : undefined;
  const attempt = t ? t.attempts : null;
  const wt = t?.worktree ? join(ctx.repo, t.worktree) : null;
  const at = spec ? `${point}:${spec.id}:${attempt ?? 0}` : `${point}:${ctx.state.plan?.id ?? ''}:${ctx.state.planAttempts}`;
  return userHooks(ctx, at, {
    event: point,
    cwd: wt ?? ctx.workspace.runWorktree,
    task: spec ? taskFacts(ctx, spec, attempt, wt) : null,
    agent: spec ? agentFacts(actorOf(spec), attempt) : null,
    ...(filesChanged ? { filesChanged } : {}),
  });
}

/** task.merge: the task's commit, before it goes into the run branch. */
export async function mergeHooks(ctx: RunContext, spec: TaskSpec, attempt: number, wt: TaskWorktree, files: string[], commit: string | null): Promise<HookAnswer> {
  if (!hooksAt(ctx, 'task.merge')) return ALLOW;
  return userHooks(ctx, `task.merge:${spec.id}:${attempt}`, {
    event: 'task.merge',
    cwd: wt.path,
    task: taskFacts(ctx, spec, attempt, wt.path),
    agent: agentFacts(actorOf(spec), attempt),
    filesChanged: files,
    merge: { into: ctx.workspace.runBranch, commit },
  });
}

/** The ledger actor of the agent that works on a task. */
function actorOf(spec: TaskSpec): string {
  const role = spec.capability.split('.')[0];
  return role === 'dev' || role === 'qa' ? `${role}:${spec.id}` : 'team';
}

/** tool.pre and tool.post around each call an agent makes (the toolbox asks). */
export function toolHooks(ctx: RunContext, o: { actor: string; taskId: string; root: string; spec: TaskSpec | null; attempt: number | null }): ToolHooks | undefined {
  if (!hooksAt(ctx, 'tool.pre') && !hooksAt(ctx, 'tool.post')) return undefined;
  const facts = (call: ToolCall) => {
    const path = resolvedPath(ctx, o.root, call.input);
    return { cwd: o.root, task: o.spec ? taskFacts(ctx, o.spec, o.attempt, o.root) : null, agent: agentFacts(o.actor, o.attempt), tool: { name: call.name, useId: call.id, input: call.input ?? null, ...(path === undefined ? {} : { path }) } };
  };
  return {
    async before(call) {
      if (!hooksAt(ctx, 'tool.pre')) return null;
      const a = await userHooks(ctx, `tool.pre:${o.taskId}:${o.attempt ?? 0}:${call.id}`, { event: 'tool.pre', ...facts(call) });
      return a.allow ? null : { blockedBy: a.hook, reason: a.reason };
    },
    async after(call, result) {
      if (!hooksAt(ctx, 'tool.post')) return null;
      const f = facts(call);
      const a = await userHooks(ctx, `tool.post:${o.taskId}:${o.attempt ?? 0}:${call.id}`, { event: 'tool.post', ...f, tool: { ...f.tool, result: { ok: result.ok, output: result.forModel } } });
      if (!a.allow) return `The hook ${a.hook} says: ${a.reason}`;
      return a.context.length === 0 ? null : a.context.join('\n');
    },
  };
}

/**
 * A file tool's `path` as the tool will resolve it in the worktree (through links and `..`), for the `paths`
 * matchers: a prompt-injected agent does not get past an `infra/**` guard by writing `src/../infra/x`. A path
 * the worktree refuses has none (the tool refuses it too).
 */
function resolvedPath(ctx: RunContext, root: string, input: unknown): string | undefined {
  const p = (input as { path?: unknown } | null | undefined)?.path;
  if (typeof p !== 'string' || p === '') return undefined;
  try {
    return resolveInRoot(ctx.deps.tools.fs, root, p).rel;
  } catch {
    return undefined;
  }
}

/**
 * task.post while the agent's session is still open: a denial goes back to the agent, which keeps working
 * (a quality gate, bounded by the session's repairs and turns); `continue: false` ends the session, and
 * the caller then denies the task as task.post policy does (`stopped`).
 */
export class CompletionGate {
  private round = 0;
  stopped: { hook: string; reason: string } | null = null;

  constructor(
    private readonly ctx: RunContext,
    readonly work: { actor: string; root: string; spec: TaskSpec; attempt: number },
  ) {}

  /** The agent loop's `check`: problems to send back, or none. */
  async check(result: unknown): Promise<string[]> {
    if (!hooksAt(this.ctx, 'task.post')) return [];
    this.round++;
    const { spec, attempt, root, actor } = this.work;
    const delivered = typeof result === 'object' && result !== null && !Array.isArray(result) ? (result as Record<string, unknown>) : { result };
    const a = await userHooks(this.ctx, `task.post:${spec.id}:${attempt}:${this.round}`, {
      event: 'task.post',
      cwd: root,
      task: taskFacts(this.ctx, spec, attempt, root),
      agent: agentFacts(actor, attempt),
      result: delivered,
      repeat: this.round > 1,
    }, { feedback: true });
    if (a.allow) return [];
    if (a.stop) {
      this.stopped = { hook: a.hook, reason: a.reason };
      return [];
    }
    return [`the hook ${a.hook} did not accept it: ${a.reason}`];
  }
}

/** escalation: the team waits for a human (a notification: nothing is stopped, a failure is recorded). */
export async function escalationHooks(ctx: RunContext, e: { reason: string; taskId: string | undefined; message: string; options: string[] }): Promise<void> {
  if (!hooksAt(ctx, 'escalation')) return;
  const t = e.taskId === undefined ? undefined : ctx.state.tasks.get(e.taskId);
  const wt = t?.worktree ? join(ctx.repo, t.worktree) : null;
  // Numbered by the run's escalations: the same in every session and in a replay (seqs are not).
  await userHooks(ctx, `escalation:${ctx.state.escalations.length}`, {
    event: 'escalation',
    cwd: wt ?? ctx.workspace.runWorktree,
    task: t ? taskFacts(ctx, t.spec, t.attempts, wt) : null,
    agent: null,
    escalation: { reason: e.reason, message: e.message, taskId: e.taskId ?? null, options: e.options },
  });
}

/** run.end: the session stops, with the run's outcome (a notification). Not replayed: a replay is one session. */
export async function runEndHooks(ctx: RunContext, outcome: { reason: string; message: string; headCommit: string | null; filesChanged: string[] }): Promise<void> {
  if (!hooksAt(ctx, 'run.end')) return;
  await userHooks(ctx, `run.end:${ctx.state.lastSeq}`, { event: 'run.end', cwd: ctx.workspace.runWorktree, task: null, agent: null, outcome });
}

/**
 * task.created, once per task as it enters the plan (admitted with it, or added by the team): run from the
 * executor's loop for each task it has not announced yet. A denial is recorded on the task, which then does
 * not start (policyCheck at task.pre): routed by the plan, or escalated, like any policy denial.
 */
export async function taskCreatedHooks(ctx: RunContext, announced: Set<string>): Promise<void> {
  if (!hooksAt(ctx, 'task.created')) return;
  for (const [id, t] of ctx.state.tasks) {
    if (announced.has(id)) continue;
    announced.add(id);
    // One that started in an earlier session was announced then, or had no hook to announce it to.
    if (t.status !== 'pending') continue;
    await userHooks(ctx, `task.created:${id}`, { event: 'task.created', cwd: ctx.workspace.runWorktree, task: taskFacts(ctx, t.spec, null, null), agent: agentFacts(actorOf(t.spec), null) });
  }
}

/** A recorded task.created denial the task still stands under (a human may have approved it since). */
export function creationDenied(ctx: RunContext, taskId: string): { reason: string } | null {
  const t = ctx.state.tasks.get(taskId);
  if (!t || t.policyOverride || t.policy?.hook !== 'task.created' || t.policy.allow) return null;
  return { reason: t.policy.reason ?? 'denied when it was created' };
}

/** The tasks a recorded task.created decision names: announced in an earlier session. */
export function announcedTasks(ctx: RunContext): Set<string> {
  return new Set(dataOf(ctx.rec.ledger.entries(), 'POLICY_DECISION').flatMap((d) => (d.hook === 'task.created' && d.taskId !== undefined ? [d.taskId] : [])));
}
