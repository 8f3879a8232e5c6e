// Changing the plan in force without a re-plan: the PM after a human's message (the executor pauses new
// tasks and waits until none runs), or a human's edit at the approval gate. Either way the new plan is
// validated like any plan, must keep every task that has started exactly as it is, and is recorded as
// PLAN_AMENDED with a diff a reader can follow.
import { canonicalJson } from '../core/acm/canonical-json.js';
import type { Plan, PlanSet } from '../core/acm/contracts.js';
import { pmAmendAgent } from '../agents/pm/pm-amend-agent.js';
import type { RunState } from '../core/run/state.js';
import type { RunContext } from './run-context.js';
import { mcpToolProblems, toPlanSet } from './planning.js';
import { runTaskAgent } from './task-common.js';
import { policyCheck } from './task-policy.js';
import { roleProblems } from './roles.js';

export interface Problem {
  path: string;
  message: string;
}

/** What changed from `before` to `after`, in one line per kind of change. */
export function planDiff(before: Plan, after: Plan): string {
  const ids = (p: Plan) => new Map(p.tasks.map((t) => [t.id, t]));
  const [a, b] = [ids(before), ids(after)];
  const added = [...b.keys()].filter((id) => !a.has(id)).map((id) => `${id} (${b.get(id)!.capability})`);
  const dropped = [...a.keys()].filter((id) => !b.has(id));
  const changed = [...b.keys()].filter((id) => a.has(id) && canonicalJson(a.get(id)!) !== canonicalJson(b.get(id)!));
  const edge = (e: Plan['edges'][number]) => `${e.from}->${e.to}${e.guard ? ` if ${e.guard}` : ''}${e.onError ? ` on ${e.onError}` : ''}`;
  const ea = new Set(before.edges.map(edge));
  const eb = new Set(after.edges.map(edge));
  const parts = [
    added.length > 0 ? `tasks added: ${added.join(', ')}` : '',
    dropped.length > 0 ? `tasks dropped: ${dropped.join(', ')}` : '',
    changed.length > 0 ? `tasks changed: ${changed.join(', ')}` : '',
    [...eb].some((e) => !ea.has(e)) ? `edges added: ${[...eb].filter((e) => !ea.has(e)).join(', ')}` : '',
    [...ea].some((e) => !eb.has(e)) ? `edges dropped: ${[...ea].filter((e) => !eb.has(e)).join(', ')}` : '',
    before.rationale !== after.rationale ? 'rationale changed' : '',
  ].filter((x) => x !== '');
  return parts.length > 0 ? parts.join('; ') : 'no change';
}

/**
 * Problems with amending `current` into `next`, beyond validating `next` as a plan: same plan id, and every
 * task that is not pending (it ran, runs, or was settled) kept exactly as it is.
 */
export function continuityProblems(state: RunState, current: Plan, next: Plan): Problem[] {
  const out: Problem[] = [];
  if (next.id !== current.id) out.push({ path: '$.id', message: `the amended plan must keep the id ${current.id}` });
  const byId = new Map(next.tasks.map((t) => [t.id, t]));
  for (const t of current.tasks) {
    const status = state.tasks.get(t.id)?.status ?? 'pending';
    if (status === 'pending') continue;
    const kept = byId.get(t.id);
    if (!kept) out.push({ path: `$.tasks`, message: `task ${t.id} is ${status}: it cannot be dropped` });
    else if (canonicalJson(kept) !== canonicalJson(t)) out.push({ path: `$.tasks[${next.tasks.indexOf(kept)}]`, message: `task ${t.id} is ${status}: it must stay exactly as it is` });
  }
  return out;
}

/** Every check a plan amendment passes: the plan validator, MCP tools and roles the tasks name, continuity. */
export function amendmentCheck(ctx: RunContext, current: Plan, next: Plan): Problem[] {
  const set: PlanSet = { goalId: next.goalId, contextRef: next.contextRef, plans: [next], selection: { method: 'human', chosenPlanId: next.id, rationale: 'amended' } };
  return [...ctx.deps.governance.validatePlanSet(set, ctx.facts), ...mcpToolProblems(ctx, set), ...roleProblems(ctx, set), ...continuityProblems(ctx.state, current, next)];
}

/**
 * The PM's answer to messages sent to it while the plan runs (no task runs now): it keeps the plan or returns
 * an amended one, validated and admitted by policy before it is recorded; an invalid amendment goes back to
 * it with the problems, as an invalid plan does.
 */
export async function amendFromMessages(ctx: RunContext, due: { deliver: () => Promise<{ ids: string[]; texts: string[] }> }): Promise<void> {
  const { ids, texts } = await due.deliver();
  const current = ctx.state.plan!;
  const goal = ctx.state.started!.goal;
  const capabilities = ctx.deps.governance.capabilityMap.capabilities.map((c) => `- ${c.name} (${c.actor}): ${c.description}`).join('\n');
  const statuses = current.tasks.map((t) => `- ${t.id} (${t.capability}): ${ctx.state.tasks.get(t.id)?.status ?? 'pending'}`).join('\n');
  let amended: Plan | null = null;
  const outcome = await runTaskAgent(ctx, {
    def: pmAmendAgent,
    actor: 'pm',
    taskId: 'amend',
    root: ctx.workspace.runWorktree,
    promptValues: { capabilities },
    task: `Goal: ${goal.intent}\n\nThe plan in force:\n${JSON.stringify(current, null, 1)}\n\nTask status:\n${statuses}\n\n${texts.join('\n\n')}`,
    check: async (out) => {
      if (!out.plan) return [];
      const next = toPlanSet({ plans: [out.plan], chosenPlanId: out.plan.id, selectionRationale: out.rationale }, goal, current.contextRef, current.capabilityMapVersion).plans[0]!;
      const problems = amendmentCheck(ctx, current, next);
      if (problems.length > 0) return problems.map((p) => `${p.path}: ${p.message}`);
      const admit = await admitted(ctx, next);
      if (admit !== null) return [admit];
      amended = next;
      return [];
    },
  });
  const plan = amended as Plan | null;
  const rationale = outcome.kind === 'returned' ? outcome.result.rationale : `the PM could not answer (${outcome.kind}${'message' in outcome ? `: ${outcome.message}` : ''}); the plan stays as it was`;
  await ctx.rec.record('pm', 'PLAN_AMENDED', {
    by: 'pm',
    planId: current.id,
    ...(plan ? { plan } : {}),
    diff: plan ? planDiff(current, plan) : 'no change',
    rationale,
    messageIds: ids,
  });
}

/** `plan.admit` over the amended plan: null when policy allows it, else why not. */
export async function admitted(ctx: RunContext, plan: Plan): Promise<string | null> {
  const before = ctx.state.plan;
  ctx.state.plan = plan;
  const admit = await policyCheck(ctx, 'plan.admit', null).finally(() => (ctx.state.plan = before));
  return admit.allow ? null : `policy refused the plan: ${admit.reason ?? 'no reason given'}`;
}
