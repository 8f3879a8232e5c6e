// The outcome rule: the one place that decides whether a run succeeded. The executor's terminal reason,
// the exit code, `acia show`, the wiki and the bundle all take it from here (or from the RUN_COMPLETED
// it wrote), over the one state fold, so no reader can call a run a success the ledger does not prove.
import type { RunState, TaskState } from './run-state.js';

export type Verdict = 'succeeded' | 'failed' | 'verification_failed';

export interface Outcome {
  verdict: Verdict;
  /** One line per broken condition, in plan order; empty when the run succeeded. */
  reasons: string[];
  /**
   * Every other condition holds and only the proof is missing: no passing test run on the final
   * run-branch head after the last merge. The team runs the tests there once and judges again.
   */
  needsFinalTestRun: boolean;
}

/** Tasks that stand in the plan: a task a re-verification replaced is judged through its replacement. */
function standing(state: RunState): [string, TaskState][] {
  return [...state.tasks.entries()].filter(([, t]) => t.supersededBy === null);
}

/**
 * A run is `succeeded` only when (1) every task of the chosen plan (after re-plans) completed or was
 * skipped because guards made it unreachable — not because a predecessor failed or a human skipped it;
 * (2) every verification expression of every task held when last evaluated; (3) a real test run passed
 * (exit 0) on the final run-branch head, recorded after the last merge.
 */
export function judgeRun(state: RunState, head: string | null = state.runHead): Outcome {
  const reasons: string[] = [];
  let testsFailed = false;
  if (state.plan === null) return { verdict: 'failed', reasons: ['no plan was chosen'], needsFinalTestRun: false };
  for (const [id, t] of standing(state)) {
    switch (t.status) {
      case 'completed':
        break;
      case 'skipped':
        if (t.skipCause === 'human') reasons.push(`task ${id} was skipped by a human`);
        else if (t.skipCause === 'join') reasons.push(`task ${id} was not run: it joins all of its branches, and guards closed some of them while others were taken (a join 'any' runs it after whichever is taken)`);
        else if (t.skipCause !== 'guard') reasons.push(`task ${id} was skipped because a task before it failed or was skipped`);
        break;
      case 'failed':
        if (t.spec.capability.startsWith('qa.') && t.lastVerification?.source !== 'check' && t.lastVerification?.passed === false) testsFailed = true;
        reasons.push(`task ${id} failed: ${t.lastError?.message ?? 'unknown error'}`);
        break;
      default:
        reasons.push(`task ${id} never finished (${t.status})`);
    }
    if (t.status === 'completed') {
      for (const expr of t.spec.verification) {
        const v = t.checks[expr];
        if (v !== true) reasons.push(`task ${id}: verification ${expr} ${v === false ? 'is false' : 'was never evaluated'}`);
      }
    }
  }
  // `head` is the final run-branch head: by default the one the ledger's merges lead to; the team passes
  // its workspace's (the same in a live run; in a replay, where parallel merges may interleave otherwise,
  // the recorded one). A test run on that exact commit is necessarily after the merge that made it.
  const onHead = state.testRuns.filter((r) => r.commit !== null && r.commit === head);
  const proof = onHead.find((r) => r.exitCode === 0);
  const last = onHead.at(-1);
  if (last !== undefined && last.exitCode !== 0) {
    testsFailed = true;
    reasons.push(`the tests fail on the final run-branch head ${short(head)} (exit ${String(last.exitCode)})`);
  }
  const needsFinalTestRun = reasons.length === 0 && proof === undefined;
  if (needsFinalTestRun) reasons.push(`no passing test run on the final run-branch head ${short(head)} after the last merge`);
  if (reasons.length === 0) return { verdict: 'succeeded', reasons, needsFinalTestRun: false };
  return { verdict: testsFailed ? 'verification_failed' : 'failed', reasons, needsFinalTestRun };
}

function short(commit: string | null): string {
  return commit === null ? '(unknown)' : commit.slice(0, 12);
}

/** The one-line message for a verdict. */
export function outcomeMessage(state: RunState, o: Outcome, head: string | null = state.runHead): string {
  if (o.verdict === 'succeeded') {
    const done = [...state.tasks.values()].filter((t) => t.status === 'completed').length;
    const skipped = [...state.tasks.values()].filter((t) => t.status === 'skipped').length;
    const proof = state.testRuns.filter((r) => r.exitCode === 0 && r.commit === head).at(-1);
    return `${done} task(s) completed${skipped > 0 ? `, ${skipped} not taken by guards` : ''}; tests pass on ${short(head)}${proof ? ` (${proof.taskId})` : ''}`;
  }
  const [first, ...rest] = o.reasons;
  return `${first ?? 'the outcome rule does not hold'}${rest.length > 0 ? ` (and ${rest.length} more: ${rest.join('; ')})` : ''}`;
}
