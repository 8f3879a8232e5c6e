// The generated wiki pages: index, one page per run, one per decision, and escalations awaiting a human.
import type { Plan } from '../acm/contracts.js';
import type { LedgerEntry } from '../ledger/entry.js';
import type { EventDataOf } from '../ledger/events.js';
import type { PendingEscalation } from '../run/state.js';
import { planMermaid } from './mermaid.js';
import { fenced, frontMatter, inline, money } from './markdown.js';
import type { RunSummary } from './run-summary.js';

export const DECISION_TYPES = [
  'PLAN_SELECTED', 'BRANCH_TAKEN', 'POLICY_DECISION', 'REPLAN_TRIGGERED', 'COMPENSATION_APPLIED',
  'GOAL_AMENDED', 'ESCALATION_REQUESTED', 'HUMAN_RESPONSE', 'CANDIDATES_JUDGED', 'CANCEL_REQUESTED',
] as const;

export function indexPage(runs: readonly RunSummary[], memoryPages: readonly string[]): string {
  const rows = runs.map(
    (r) => `| [${r.runId}](runs/${r.runId}.md) | ${inline(r.status)} | ${inline(r.goal, 80)} | ${money(r.costUsd)} | ${r.terminal ? inline(r.terminal.reason) : '—'} |`,
  );
  return [
    frontMatter([['kind', 'index'], ['runs', runs.length]]),
    '# ACIA wiki',
    '',
    '## Runs',
    '',
    '| run | status | goal | cost | terminal reason |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
    '',
    '## Memory',
    '',
    ...memoryPages.map((p) => `- [${p}](memory/${p}.md)`),
    '',
  ].join('\n');
}

export function runPage(s: RunSummary, decisions: readonly LedgerEntry[]): string {
  const out: string[] = [
    frontMatter([
      ['kind', 'run'], ['runId', s.runId], ['status', s.status], ['terminalReason', s.terminal?.reason ?? null],
      ['contextRef', s.contextRef], ['chosenPlan', s.chosen?.id ?? null], ['costUsd', s.costUsd],
      ['headSeq', s.head?.seq ?? null], ['headHash', s.head?.hash ?? null],
    ]),
    `# Run ${s.runId}`,
    '',
    `**Goal:** ${inline(s.goal, 500)}`,
    '',
    `- Status: ${inline(s.status)}`,
    `- Context: ${s.contextRef ? `\`${s.contextRef}\`` : 'not built'}${s.packetRef ? ` (packet blob \`${s.packetRef}\`)` : ''}`,
    `- Cost: ${money(s.costUsd)}${s.roleCosts.length > 0 ? ` (by role: ${s.roleCosts.map((c) => `${inline(c.role)} ${money(c.costUsd)}`).join(', ')})` : ''}`,
    `- Ledger head: ${s.head ? `seq ${s.head.seq}, \`${s.head.hash}\`` : 'empty'}`,
    '',
    '## Plans',
    '',
  ];
  for (const p of s.planSet?.plans ?? []) out.push(planSummary(p, p.id === s.chosen?.id));
  if (!s.planSet) out.push('No valid plan was proposed.', '');
  if (s.selection) out.push(`Chosen by ${inline(s.selection.method)} (seq ${s.selection.seq}): ${inline(s.selection.rationale, 500)}`, '');
  if (s.chosen) out.push('### Chosen plan', '', planMermaid(s.chosen));
  out.push('## Tasks', '', '| task | capability | title | attempts | verdict | verification |', '| --- | --- | --- | --- | --- | --- |');
  for (const t of [...s.tasks.values()]) {
    const v = t.verification
      ? `${t.verification.passed ? 'passed' : 'failed'} (${inline(t.verification.command, 60)}: ${t.verification.passedCount ?? '?'} passed, ${t.verification.failedCount ?? '?'} failed)`
      : '—';
    out.push(`| ${t.id} | ${inline(t.capability)} | ${inline(t.title, 80)} | ${t.attempts} | ${t.verdict}${t.abandoned ? ' (plan abandoned)' : ''} | ${v} |`);
  }
  const fixes = [...s.tasks.values()].filter((t) => t.failure !== undefined);
  if (fixes.length > 0) {
    out.push('', '## Failures given to fix tasks', '');
    for (const t of fixes) out.push(`### ${inline(t.id)}`, '', fenced(t.failure ?? ''));
  }
  out.push('', '## Escalations', '');
  if (s.escalations.length === 0) out.push('None.');
  for (const e of s.escalations) {
    const answer = e.answer ? `answered at seq ${e.answerSeq ?? '?'}: **${inline(e.answer.action)}**${e.answer.text ? ` — ${inline(e.answer.text, 300)}` : ''}` : 'awaiting an answer';
    out.push(`- seq ${e.seq}, ${e.reason}${e.taskId ? ` (task ${e.taskId})` : ''}: ${inline(e.message, 300)} — ${answer}`);
  }
  out.push('', '## Decisions', '');
  for (const d of decisions) out.push(`- [seq ${d.seq} ${d.type}](../decisions/${decisionFile(s.runId, d)})`);
  if (decisions.length === 0) out.push('None.');
  out.push('', '## Outcome', '', s.terminal ? `**${inline(s.terminal.reason)}**: ${inline(s.terminal.message, 500)}` : 'The run has not finished.', '');
  const g = s.evalGrade;
  if (g) out.push(`Eval instance ${inline(g.instanceId)}: **${g.resolved ? 'resolved' : 'not resolved'}** by the hidden tests${g.error ? ` (${inline(g.error, 300)})` : ''}.`, '');
  if (g?.tamperedFiles) out.push(`The model's patch changed files that decide how tests run; they were graded as the base and the test patch have them: ${g.tamperedFiles.map((f) => inline(f, 200)).join(', ')}.`, '');
  return out.join('\n');
}

function planSummary(p: Plan, chosen: boolean): string {
  const tasks = p.tasks.map((t) => `${t.id} (${inline(t.capability)})`).join(', ');
  return `- **${inline(p.id)}**${chosen ? ' (chosen)' : ''}: ${p.tasks.length} tasks — ${tasks}. ${inline(p.rationale, 300)}\n`;
}

export function decisionFile(runId: string, e: LedgerEntry): string {
  return `${runId}-${e.seq}-${e.type}.md`;
}

export function decisionPage(runId: string, e: LedgerEntry): string {
  return [
    frontMatter([['kind', 'decision'], ['runId', runId], ['type', e.type], ['seq', e.seq], ['hash', e.hash], ['actor', e.actor], ['ts', e.ts]]),
    `# ${e.type} (run ${runId}, seq ${e.seq})`,
    '',
    `- Actor: ${inline(e.actor)}`,
    `- Time: ${e.ts}`,
    `- Ledger hash: \`${e.hash}\``,
    '',
    '## Rationale',
    '',
    rationaleOf(e) ?? 'None recorded.',
    '',
    ...(e.type === 'CANDIDATES_JUDGED' ? candidateTable(e.data) : []),
    '## Data',
    '',
    fenced(JSON.stringify(e.data, null, 2), 'json'),
  ].join('\n');
}

/** The words a decision gives for itself, if any. */
function rationaleOf(e: LedgerEntry): string | null {
  const text = (v: string | undefined): string | null => (v === undefined ? null : inline(v, 2000));
  switch (e.type) {
    case 'PLAN_SELECTED':
    case 'CANDIDATES_JUDGED':
      return text(e.data.rationale);
    case 'COMPENSATION_APPLIED':
    case 'ESCALATION_REQUESTED':
      return text(e.data.reason);
    case 'REPLAN_TRIGGERED':
      return text(e.data.cause);
    case 'GOAL_AMENDED':
      return text(e.data.delta);
    case 'HUMAN_RESPONSE':
      return text(e.data.text);
    case 'POLICY_DECISION':
      return text(e.data.response.reason);
    case 'CANCEL_REQUESTED':
      return text(`cancelled by ${e.data.by} at ${e.data.requestedAt} (${e.data.wasRunning ? 'while it ran: it stopped at its next safe point' : 'while nothing ran it'})`);
    default:
      return null;
  }
}

/** Best-of-N: every candidate's verdict, the winner first. */
function candidateTable(data: EventDataOf<'CANDIDATES_JUDGED'>): string[] {
  const winner = data.winner;
  const sorted = [...data.candidates].sort((a, b) => Number(b.agent === winner) - Number(a.agent === winner));
  return [
    '## Candidates',
    '',
    '| agent | tests | failing | diff lines | cost | branch |',
    '| --- | --- | --- | --- | --- | --- |',
    ...sorted.map((c) => `| ${inline(c.agent)}${c.agent === winner ? ' (winner)' : ''} | ${c.finished ? (c.testsPassed ? 'passed' : 'failed') : `did not finish${c.notFinished ? `: ${inline(c.notFinished, 200)}` : ''}`} | ${c.failedCount ?? '—'} | ${c.diffLines} | ${money(c.costUsd)} | \`${inline(c.branch)}\` |`),
    '',
  ];
}

export function escalationPage(s: RunSummary, open: PendingEscalation): string {
  return [
    frontMatter([['kind', 'escalation'], ['runId', s.runId], ['seq', open.seq], ['reason', open.reason], ['taskId', open.taskId ?? null]]),
    `# Run ${s.runId} is waiting for you`,
    '',
    `**Problem** (${open.reason}${open.taskId ? `, task ${open.taskId}` : ''}): ${inline(open.message, 1000)}`,
    '',
    '## Last failure',
    '',
    open.lastFailure ? fenced(open.lastFailure) : 'None recorded.\n',
    `Options: ${open.options.join(', ')}`,
    '',
    '## Resume',
    '',
    // One runnable command per answer the question takes (run from inside the repository).
    fenced(
      open.options.map((o) => `acia resume ${s.runId} --answer ${o === 'guidance' ? "'your guidance for the team'" : o}`).join('\n'),
      'sh',
    ),
  ].join('\n');
}
