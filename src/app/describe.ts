// One line of text for a ledger entry: used by plain progress, the live view and `acia show`.
import type { LedgerEntry } from '../core/acm/contracts.js';
import { forTerminal } from '../core/text/terminal.js';

type D = Record<string, unknown>;
const s = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));

/** One line for the terminal: entries carry model and tool text, so controls are stripped here, once. */
export function describeEntry(e: LedgerEntry): string {
  return forTerminal(describeRaw(e));
}

function describeRaw(e: LedgerEntry): string {
  const d = (e.data ?? {}) as D;
  switch (e.type) {
    case 'RUN_STARTED':
      return `run started on ${s((d.runBranch) ?? '')} from ${s(d.baseCommit).slice(0, 10)} with ${s(d.model)}`;
    case 'RUN_RESUMED':
      return `run resumed${d.answer === undefined ? '' : ` with answer "${s(d.answer)}"`}`;
    case 'CONTEXT_BUILT':
      return `context packet ${s(d.contextRef).slice(0, 19)}…: ${s(d.summary)}`;
    case 'CONTEXT_INTERNALIZED':
      return `internal context: ${(d.artifacts as D[]).map((a) => s(a.uri)).join(', ')}`;
    case 'PLAN_PROPOSED':
      return d.valid ? `plan set proposed (attempt ${s(d.attempt)})` : `invalid plan set (attempt ${s(d.attempt)}): ${s((d.problems as { message: string }[])[0]?.message)}`;
    case 'PLAN_SELECTED':
      return `chose ${s(d.planId)} (${s(d.method)}): ${s(d.rationale)}`;
    case 'BRANCH_TAKEN':
      return `guard ${s(d.from)}->${s(d.to)} \`${s(d.guard)}\` is ${s(d.value)}`;
    case 'POLICY_DECISION': {
      const r = d.response as D;
      return `policy ${s(d.hook)}${d.taskId ? ` ${s(d.taskId)}` : ''}: ${r.allow ? 'allow' : `deny (${s(r.reason)})`}`;
    }
    case 'REPLAN_TRIGGERED':
      return `re-plan ${s(d.fromPlanId)} -> ${s(d.toPlanId)}: ${s(d.cause)}`;
    case 'COMPENSATION_APPLIED':
      return `compensation on ${s(d.taskId)}: ${s(d.reason)}`;
    case 'GOAL_AMENDED':
      return `goal amended by ${s(d.by)}: ${s(d.delta)}`;
    case 'TASK_ADDED': {
      const t = d.task as D;
      if (d.reason === 'merge') return `added ${s(t.id)} (${s(t.capability)}) to resolve ${s(d.parent)}'s merge conflict`;
      return `added ${s(t.id)} (${s(t.capability)}), ${s(d.reason)} iteration ${s(d.iteration)}`;
    }
    case 'TASK_STARTED':
      return `${s(d.taskId)} started (${s(d.capability)}, attempt ${s(d.attempt)})`;
    case 'LLM_CALL': {
      const u = d.usage as D;
      const cost = typeof d.costUsd === 'number' ? ` $${d.costUsd.toFixed(4)}` : '';
      return `model ${s(d.stopReason)}: ${s(u.inputTokens)} in, ${s(u.cacheReadTokens)} cache read, ${s(u.cacheWriteTokens)} cache write, ${s(u.outputTokens)} out${cost}`;
    }
    case 'TOOL_CALL':
      return `${s(d.name)} ${summariseInput(d.input)}`;
    case 'TOOL_RESULT': {
      const data = d.data as D | undefined;
      const exit = data && typeof data.exitCode === 'number' ? ` exit ${data.exitCode}` : '';
      const problems = data && data.rejected === true && Array.isArray(data.problems) ? data.problems.map(String) : null;
      if (problems) return `${s(d.name)} rejected: ${problems.join('; ').replace(/\s+/g, ' ').slice(0, 300)}`;
      const why = data && typeof data.cannotRun === 'string' ? ` — ${data.cannotRun}` : '';
      return `${s(d.name)} ${d.ok ? 'ok' : 'failed'}${exit}${why}`;
    }
    case 'CHECKPOINT':
      return `checkpoint ${s(d.taskId)} ${s(d.commit).slice(0, 10)} (${(d.files as string[]).length} files)`;
    case 'MCP_TOOLS': {
      const servers = d.servers as { name: string; error: string | null; tools: number }[];
      return `MCP servers: ${servers.map((x) => (x.error === null ? `${x.name} (${x.tools} tools)` : `${x.name} FAILED: ${x.error}`)).join(', ') || 'none'}`;
    }
    case 'MERGE':
      return d.conflict ? `merge of ${s(d.taskId)} CONFLICTS in ${(d.files as string[]).join(', ')}` : `merged ${s(d.taskId)} into ${s(d.into)}`;
    case 'CANDIDATES_JUDGED':
      return `${s(d.taskId)} best of ${(d.candidates as unknown[]).length}: ${d.winner === null ? 'no winner' : `${s(d.winner)} wins`} (${s(d.rationale)})`;
    case 'VERIFICATION': {
      const counts = d.passedCount === null ? '' : `, ${s(d.passedCount)} passed, ${s(d.failedCount)} failed`;
      const why = typeof d.cannotRun === 'string' ? ` — could not run: ${d.cannotRun}` : '';
      return `${s(d.taskId)} verification ${d.passed ? 'PASSED' : 'FAILED'} (${s(d.source)}: ${s(d.command)}, exit ${s(d.exitCode)}${counts})${why}`;
    }
    case 'RETRY_SCHEDULED':
      return `retry ${s(d.taskId)} attempt ${s(d.attempt)} in ${s(d.delayMs)} ms: ${s(d.reason)}`;
    case 'ESCALATION_REQUESTED':
      return `needs a human (${s(d.reason)}): ${s(d.message)}`;
    case 'HUMAN_RESPONSE':
      return `human: ${s(d.action)}${d.text ? ` "${s(d.text)}"` : ''}`;
    case 'MEMORY_UPDATED':
      return `memory page ${s(d.page)} updated: ${s(d.reason)}`;
    case 'BUDGET_EXCEEDED':
      return `budget exceeded: ${s(d.limit)} ${s(d.spent)} > ${s(d.max)}`;
    case 'TASK_COMPLETED':
      return `${s(d.taskId)} completed: ${s(d.summary).split('\n')[0] ?? ''}`;
    case 'TASK_FAILED':
      return `${s(d.taskId)} failed (${s(d.errorKind)}): ${s(d.message)}`;
    case 'TASK_SKIPPED':
      return `${s(d.taskId)} skipped: ${s(d.reason)}`;
    case 'LEDGER_RECOVERED':
      return `ledger recovered: truncated ${s(d.truncatedBytes)} bytes (${s(d.reason)})`;
    case 'RUN_COMPLETED':
      return `run ${s(d.reason)}: ${s(d.message)}`;
    case 'EVAL_GRADED':
      return `eval ${s(d.instanceId)}: ${d.resolved ? 'RESOLVED' : 'not resolved'}${d.error ? ` (${s(d.error)})` : ''}`;
  }
}

function summariseInput(input: unknown): string {
  if (typeof input !== 'object' || input === null) return '';
  const o = input as D;
  const v = o.path ?? o.command ?? o.pattern ?? '';
  const text = s(v);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
