// `acia run --approve-plan`: after planning the run stops at a human gate showing Plan-A and Plan-B (their
// task trees, the mermaid graph of the PM's choice, an estimated cost). The human approves the PM's choice,
// switches to the other plan, edits a plan (validated like any plan; an invalid edit is refused with the
// validator's message and nothing is recorded), or rejects the plans with feedback the PM plans again from.
// The gate is an escalation like any other, so the terminal, `--answer`, ACP, MCP and the fleet answer it.
import { Plan, type PlanSet } from '../core/acm/contracts.js';
import { AciaError } from '../core/errors.js';
import { planMermaid } from '../core/wiki/mermaid.js';
import type { HumanAction } from '../core/ledger/run-vocabulary.js';
import type { PendingEscalation } from '../core/run/state.js';
import type { HumanAnswer } from './deps.js';
import type { RunContext } from './run-context.js';
import { amendmentCheck, planDiff } from './plan-amend.js';
import { loadRunRoles, roleNameOf, roleOf } from './roles.js';

/** Model calls a task of each kind is estimated at (a Dev session reads, edits and tests; QA runs the tests). */
const CALLS_PER_TASK: Record<string, number> = { dev: 8, qa: 3 };
const OUTPUT_TOKENS_PER_CALL = 1000;

/** The cost a plan is estimated at: its agent tasks' model calls, each the size of the PM's so far, at its role's price. */
export function estimateCost(ctx: RunContext, plan: Plan): { usd: number | null; calls: number } {
  const perCall = ctx.state.modelCalls > 0 ? Math.round(ctx.state.tokens / ctx.state.modelCalls) : 4000;
  let usd: number | null = 0;
  let calls = 0;
  for (const t of plan.tasks) {
    const role = roleOf(ctx, roleNameOf(t.capability, t.input));
    const n = CALLS_PER_TASK[t.capability.split('.')[0] ?? ''] ?? 0;
    if (n === 0) continue;
    calls += n;
    const cost = role.model.costUsd(role.model.id, { inputTokens: perCall * n, outputTokens: OUTPUT_TOKENS_PER_CALL * n, cacheReadTokens: 0, cacheWriteTokens: 0 });
    usd = usd === null || cost === null ? null : usd + cost;
  }
  return { usd, calls };
}

/** The gate's question: every plan as a tree with its estimate, the chosen one's graph, and the answers. */
export function approvalMessage(ctx: RunContext, planSet: PlanSet): string {
  const chosen = planSet.selection.chosenPlanId;
  const lines = ['Approve the plan before the team starts.', ''];
  for (const plan of planSet.plans) {
    const est = estimateCost(ctx, plan);
    const cost = est.usd === null ? 'cost unknown (unpriced model)' : `est. ~$${est.usd.toFixed(2)}`;
    lines.push(`${plan.id === chosen ? '●' : '○'} ${plan.id}${plan.id === chosen ? ' (the PM chose it)' : ''}: ${plan.rationale} — ${cost}, ${plan.tasks.length} task(s), ~${est.calls} model calls`);
    for (const t of plan.tasks) {
      const after = plan.edges.filter((e) => e.to === t.id).map((e) => e.from);
      const what = (t.input as { instructions?: unknown }).instructions;
      const role = (t.input as { role?: unknown }).role;
      lines.push(`    ${t.id.padEnd(6)} ${t.capability.padEnd(15)} ${t.title ?? (typeof what === 'string' ? what.slice(0, 60) : '')}${typeof role === 'string' ? ` [role ${role}]` : ''}${after.length > 0 ? `  after ${after.join(', ')}` : ''}`);
    }
  }
  const plan = planSet.plans.find((p) => p.id === chosen) ?? planSet.plans[0]!;
  lines.push('', planMermaid(plan).trimEnd(), '');
  const others = planSet.plans.filter((p) => p.id !== plan.id).map((p) => p.id);
  lines.push(`Answer approve (run ${plan.id})${others.length > 0 ? `, switch (run ${others.join(' or ')}: switch <id>)` : ''}, edit (change the plan in $EDITOR, or edit <plan JSON>), abort, or any other text: reject the plans with that feedback and let the PM plan again.`);
  return lines.join('\n');
}

/** What a plan approval answer asks for, before it is recorded. */
export type ApprovalDecision =
  | { kind: 'approve' }
  | { kind: 'switch'; planId: string }
  | { kind: 'edit'; plan: Plan }
  | { kind: 'reject'; feedback: string }
  | { kind: 'abort' };

/**
 * An answer checked against the plans: the other plan must exist, an edited plan must be valid (the
 * validator's message otherwise, as an INPUT_INVALID error: nothing is recorded).
 */
export function decide(ctx: RunContext, planSet: PlanSet, answer: HumanAnswer): ApprovalDecision {
  const chosen = planSet.plans.find((p) => p.id === planSet.selection.chosenPlanId) ?? planSet.plans[0]!;
  switch (answer.action) {
    case 'approve':
      return { kind: 'approve' };
    case 'abort':
      return { kind: 'abort' };
    case 'switch': {
      const want = answer.text?.trim();
      const others = planSet.plans.filter((p) => p.id !== chosen.id);
      const to = want ? planSet.plans.find((p) => p.id === want) : others[0];
      if (!to) throw new AciaError('USAGE', want ? `there is no plan ${want} (plans: ${planSet.plans.map((p) => p.id).join(', ')})` : `there is no other plan than ${chosen.id} to switch to`);
      return { kind: 'switch', planId: to.id };
    }
    case 'edit':
      return { kind: 'edit', plan: editedPlan(ctx, planSet, chosen, answer.text ?? '') };
    default:
      if ((answer.text ?? '').trim() === '') throw new AciaError('USAGE', 'a rejection needs feedback for the PM: say what to change');
      return { kind: 'reject', feedback: answer.text!.trim() };
  }
}

/** The edited plan as JSON, completed from the plan it edits (ids of goal and context), and checked. */
function editedPlan(ctx: RunContext, planSet: PlanSet, chosen: Plan, text: string): Plan {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new AciaError('INPUT_INVALID', `the edited plan is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new AciaError('INPUT_INVALID', 'the edited plan must be a JSON object (one plan)');
  const raw = value as Record<string, unknown>;
  const id = typeof raw.id === 'string' ? raw.id : chosen.id;
  const base = planSet.plans.find((p) => p.id === id) ?? chosen;
  const parsed = Plan.safeParse({ goalId: base.goalId, contextRef: base.contextRef, capabilityMapVersion: base.capabilityMapVersion, edges: [], joins: [], ...raw, id });
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new AciaError('INPUT_INVALID', `the edited plan is invalid: $.${first?.path.join('.') ?? ''}: ${first?.message ?? 'invalid'}`);
  }
  const problems = amendmentCheck(ctx, base, parsed.data);
  if (problems.length > 0) throw new AciaError('INPUT_INVALID', `the edited plan is invalid: ${problems[0]!.path}: ${problems[0]!.message}${problems.length > 1 ? ` (+${problems.length - 1} more)` : ''}`);
  return parsed.data;
}

/**
 * Records a decided answer: the human's response, and for an edit the amended plan with its diff, for a
 * rejection the feedback as an amendment of the goal. The caller then selects a plan or plans again.
 */
export async function recordDecision(ctx: RunContext, esc: PendingEscalation, d: ApprovalDecision, planSet: PlanSet): Promise<void> {
  const action: HumanAction = d.kind === 'reject' ? 'guidance' : d.kind;
  const text = d.kind === 'switch' ? d.planId : d.kind === 'edit' ? JSON.stringify(d.plan) : d.kind === 'reject' ? d.feedback : undefined;
  await ctx.rec.record('human', 'HUMAN_RESPONSE', { escalationSeq: esc.seq, action, ...(text === undefined ? {} : { text }) });
  if (d.kind === 'edit') {
    const before = planSet.plans.find((p) => p.id === d.plan.id)!;
    await ctx.rec.record('human', 'PLAN_AMENDED', { by: 'human', planId: d.plan.id, plan: d.plan, diff: planDiff(before, d.plan), rationale: 'edited by a human at the plan approval gate' });
  }
  if (d.kind === 'reject') await ctx.rec.record('human', 'GOAL_AMENDED', { by: 'human', delta: `plans rejected at the approval gate: ${d.feedback}` });
}

/**
 * An answer to the gate as typed (`--answer`, MCP, the fleet): approve, abort, `switch [<id>]`,
 * `edit <plan JSON>`, or any other text: a rejection with that feedback.
 */
export function parseApprovalAnswer(raw: string): HumanAnswer {
  const text = raw.trim();
  const word = text.toLowerCase();
  if (word === 'approve' || word === 'abort') return { action: word };
  const m = /^(switch|edit)(?:\s+([\s\S]*))?$/i.exec(text);
  if (!m) return { action: 'guidance', text };
  const rest = m[2]?.trim();
  return { action: m[1]!.toLowerCase() as 'switch' | 'edit', ...(rest ? { text: rest } : {}) };
}

/**
 * `acia resume --answer` (and every front end that answers through it) at the gate: the answer checked
 * against the plans with the run's recorded roles, before anything is recorded.
 */
export async function checkApprovalAnswer(ctx: RunContext, raw: string): Promise<ApprovalDecision> {
  const planSet = ctx.state.planSet;
  if (!planSet) throw new AciaError('USAGE', 'the run has no plans to approve');
  if (ctx.state.roles !== null) await loadRunRoles(ctx);
  const answer = parseApprovalAnswer(raw);
  if (answer.action === 'edit' && answer.text === undefined) {
    throw new AciaError('USAGE', 'edit needs the edited plan: --answer "edit <plan JSON>" (on a terminal, answer edit at the question to use $EDITOR)');
  }
  return decide(ctx, planSet, answer);
}
