// One line of text for a ledger entry: used by plain progress, the live view, ACP messages, MCP and
// `acia show`. One formatter per entry type over its parsed payload; a type without one (new, or not
// worth a sentence) is described by its name and the payload's first words.
import type { EntryOf, LedgerEntry } from '../core/ledger/entry.js';
import type { EventDataOf, LedgerEntryType } from '../core/ledger/events.js';
import { forTerminal } from '../core/text/terminal.js';

type Line<K extends LedgerEntryType> = (d: EventDataOf<K>) => string;

const short = (hash: string, n: number): string => hash.slice(0, n);

const LINES: { readonly [K in LedgerEntryType]?: Line<K> } = {
  RUN_STARTED: (d) => `run started on ${d.runBranch} from ${short(d.baseCommit, 10)} with ${d.model}`,
  RUN_RESUMED: (d) => `run resumed${d.answer === undefined ? '' : ` with answer "${d.answer}"`}`,
  CONTEXT_BUILT: (d) => `context packet ${short(d.contextRef, 19)}…: ${d.summary}`,
  CONTEXT_INTERNALIZED: (d) => `internal context: ${d.artifacts.map((a) => a.uri).join(', ')}`,
  PLAN_PROPOSED: (d) => (d.valid ? `plan set proposed (attempt ${d.attempt})` : `invalid plan set (attempt ${d.attempt}): ${d.problems[0]?.message ?? ''}`),
  PLAN_SELECTED: (d) => `chose ${d.planId} (${d.method}): ${d.rationale}`,
  BRANCH_TAKEN: (d) => `guard ${d.from}->${d.to} \`${d.guard}\` is ${String(d.value)}`,
  POLICY_DECISION: (d) =>
    `${d.by ? `hook ${d.by.name} at ${d.hook}` : `policy ${d.hook}`}${d.taskId ? ` ${d.taskId}` : ''}: ${d.response.allow ? 'allow' : `deny (${(d.response.reason ?? '').split('\n')[0]}${d.response.feedback === true ? '; sent back to the agent' : ''})`}`,
  REPLAN_TRIGGERED: (d) => `re-plan ${d.fromPlanId} -> ${d.toPlanId}: ${d.cause}`,
  COMPENSATION_APPLIED: (d) => `compensation on ${d.taskId}: ${d.reason}`,
  GOAL_AMENDED: (d) => `goal amended by ${d.by}: ${d.delta}`,
  TASK_ADDED: (d) =>
    d.reason === 'merge'
      ? `added ${d.task.id} (${d.task.capability}) to resolve ${d.parent ?? ''}'s merge conflict`
      : `added ${d.task.id} (${d.task.capability}), ${d.reason} iteration ${d.iteration}`,
  TASK_STARTED: (d) => `${d.taskId} started (${d.capability}, attempt ${d.attempt}${d.worker === undefined ? '' : `, on worker ${d.worker}`})`,
  LLM_CALL: (d) => {
    const u = d.usage;
    const cost = d.costUsd === null ? '' : ` $${d.costUsd.toFixed(4)}`;
    return `model ${d.stopReason}: ${u.inputTokens} in, ${u.cacheReadTokens} cache read, ${u.cacheWriteTokens} cache write, ${u.outputTokens} out${cost}`;
  },
  TOOL_CALL: (d) => `${d.name} ${summariseInput(d.input)}`,
  TOOL_RESULT: (d) => {
    const data = d.data;
    const exit = data && typeof data.exitCode === 'number' ? ` exit ${data.exitCode}` : '';
    const problems = data && data.rejected === true && Array.isArray(data.problems) ? data.problems.map(String) : null;
    if (problems) return `${d.name} rejected: ${problems.join('; ').replace(/\s+/g, ' ').slice(0, 300)}`;
    const why = data && typeof data.cannotRun === 'string' ? ` — ${data.cannotRun}` : '';
    return `${d.name} ${d.ok ? 'ok' : 'failed'}${exit}${why}`;
  },
  CHECKPOINT: (d) => `checkpoint ${d.taskId} ${short(d.commit, 10)} (${d.files.length} files)`,
  MCP_TOOLS: (d) => `MCP servers: ${d.servers.map((x) => (x.error !== null ? `${x.name} FAILED: ${x.error}` : x.pending === true ? `${x.name} still starting` : `${x.name} (${x.tools} tools)`)).join(', ') || 'none'}`,
  MERGE: (d) => (d.conflict ? `merge of ${d.taskId} CONFLICTS in ${d.files.join(', ')}` : `merged ${d.taskId} into ${d.into}`),
  CANDIDATES_JUDGED: (d) => `${d.taskId} best of ${d.candidates.length}: ${d.winner === null ? 'no winner' : `${d.winner} wins`} (${d.rationale})`,
  VERIFICATION: (d) => {
    const counts = d.passedCount === null ? '' : `, ${d.passedCount} passed, ${d.failedCount ?? ''} failed`;
    const why = d.cannotRun === undefined ? '' : ` — could not run: ${d.cannotRun}`;
    return `${d.taskId} verification ${d.passed ? 'PASSED' : 'FAILED'} (${d.source}: ${d.command}, exit ${String(d.exitCode ?? '')}${counts})${why}`;
  },
  RETRY_SCHEDULED: (d) => `retry ${d.taskId} attempt ${d.attempt} in ${d.delayMs} ms: ${d.reason}`,
  ESCALATION_REQUESTED: (d) => `needs a human (${d.reason}): ${d.message}`,
  HUMAN_RESPONSE: (d) => `human: ${d.action}${d.text ? ` "${d.text}"` : ''}`,
  MEMORY_UPDATED: (d) => `memory page ${d.page} updated: ${d.reason}`,
  BUDGET_EXCEEDED: (d) => `budget exceeded: ${d.role === undefined ? '' : `role ${d.role}: `}${d.limit} ${d.spent} > ${d.max}`,
  TASK_COMPLETED: (d) => `${d.taskId} completed: ${d.summary.split('\n')[0] ?? ''}`,
  TASK_FAILED: (d) => `${d.taskId} failed (${d.errorKind}): ${d.message}`,
  TASK_SKIPPED: (d) => `${d.taskId} skipped: ${d.reason}`,
  LEDGER_RECOVERED: (d) => `ledger recovered: truncated ${d.truncatedBytes} bytes (${d.reason})`,
  CANCEL_REQUESTED: (d) => `cancel requested by ${d.by} (${d.via}) at ${d.requestedAt}${d.wasRunning ? '; stopping at the next safe point' : ''}`,
  RUN_COMPLETED: (d) => `run ${d.reason}: ${d.message}`,
  EVAL_GRADED: (d) => `eval ${d.instanceId}: ${d.resolved ? 'RESOLVED' : 'not resolved'}${d.error ? ` (${d.error})` : ''}`,
};

/** One line for the terminal: entries carry model and tool text, so controls are stripped here, once. */
export function describeEntry(e: LedgerEntry): string {
  return forTerminal(describeTyped(e));
}

function describeTyped<K extends LedgerEntryType>(e: EntryOf<K>): string {
  const line: Line<K> | undefined = LINES[e.type];
  if (line) return line(e.data);
  const text = JSON.stringify(e.data);
  return `${e.type.toLowerCase().replace(/_/g, ' ')} ${text.length > 120 ? `${text.slice(0, 117)}...` : text}`;
}

function summariseInput(input: unknown): string {
  if (typeof input !== 'object' || input === null) return '';
  const v = 'path' in input ? input.path : 'command' in input ? input.command : 'pattern' in input ? input.pattern : '';
  const text = typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
