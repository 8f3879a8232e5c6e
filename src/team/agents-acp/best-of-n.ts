// Best-of-N: one Dev task done by several agents at once, each in its own worktree and branch; the
// real test command judges every candidate; the winner is picked by recorded facts alone (tests
// passed, then fewer failures, then a smaller diff, then lower cost) and becomes the task's result.
// Losing branches stay for inspection. No agent's words take part in the choice.
import type { EventDataOf } from '../../core/ledger/events.js';
import type { AgentOutcome } from '../../agents/agent-loop.js';
import { devAgent, type DevOutput } from '../../agents/dev/dev-agent.js';
import type { RunContext } from '../run-context.js';
import { testVerdict } from '../../core/tools/test-verdict.js';
import { runTaskAgent } from '../task-common.js';
import { recordVerdict, runTeamTests } from '../test-run.js';
import type { TaskWorktree } from '../workspace.js';
import { runAcpDevAgent, type AcpDevAgent } from './acp-dev-worker.js';

export type Candidate = EventDataOf<'CANDIDATES_JUDGED'>['candidates'][number];

export interface BestOfResult {
  /** The winner's outcome, to go on as the task's own. */
  outcome: AgentOutcome<DevOutput>;
  /** The winner's checkpoint, for the task's worktree; null when no candidate changed anything. */
  commit: string | null;
}

/** `agents`: null for ACIA's own Dev agent. */
export async function runBestOf(
  ctx: RunContext,
  o: { taskId: string; attempt: number; base: string | null; task: string; agents: { name: string; agent: AcpDevAgent | null }[] },
): Promise<BestOfResult> {
  const runs = await Promise.all(o.agents.map((a) => runCandidate(ctx, o, a)));
  const judged = runs.map((r) => r.candidate);
  const winner = pickWinner(judged);
  const chosen = runs.find((r) => r.candidate.agent === winner?.agent) ?? null;
  await ctx.rec.record('team', 'CANDIDATES_JUDGED', {
    taskId: o.taskId,
    attempt: o.attempt,
    candidates: judged,
    winner: winner?.agent ?? null,
    rationale: winner ? rationaleOf(winner, judged) : 'no candidate finished with a result',
  });
  if (!chosen || !winner) {
    const first = runs[0]?.outcome;
    return { outcome: first && first.kind !== 'returned' ? first : { kind: 'protocol_error', turns: 0, message: 'no candidate finished' }, commit: null };
  }
  return { outcome: chosen.outcome, commit: winner.commit };
}

async function runCandidate(
  ctx: RunContext,
  o: { taskId: string; attempt: number; base: string | null; task: string },
  a: { name: string; agent: AcpDevAgent | null },
): Promise<{ candidate: Candidate; outcome: AgentOutcome<DevOutput> }> {
  const id = `${o.taskId}-${a.name}`;
  const actor = `dev:${id}`;
  const wt: TaskWorktree = await ctx.workspace.prepareTask(id, o.base);
  const costBefore = spentBy(ctx, actor);
  const outcome = a.agent
    ? await runAcpDevAgent(ctx, { agent: { ...a.agent, name: a.name }, actor, taskId: o.taskId, root: wt.path, task: o.task })
    : await runTaskAgent(ctx, { def: devAgent, actor, taskId: o.taskId, root: wt.path, task: o.task });
  const summary = outcome.kind === 'returned' ? outcome.result.summary : `${outcome.kind}: ${outcome.message}`;
  const { commit, files } = await ctx.workspace.checkpoint(id, wt, `acia(${o.taskId}) by ${a.name}: ${summary.split('\n')[0]?.slice(0, 60) ?? ''}\n\nRun: ${ctx.runId}, attempt ${o.attempt}`);
  let tests: { passed: boolean; exitCode: number | null; failed: number | null } = { passed: false, exitCode: null, failed: null };
  if (outcome.kind === 'returned') {
    const verdict = testVerdict(await runTeamTests(ctx, wt.path), ctx.testCommand ?? 'none');
    tests = { passed: verdict.passed, exitCode: verdict.exitCode, failed: verdict.failedCount };
    // The candidate's own tree: the outcome rule counts a test run only on the commit it names.
    await recordVerdict(ctx, id, verdict, { source: 'team_run', commit: commit ?? wt.baseCommit });
  }
  const diffLines = commit ? await ctx.workspace.diffSize(wt.baseCommit, commit) : 0;
  return {
    outcome,
    candidate: {
      agent: a.name,
      branch: wt.branch,
      commit,
      finished: outcome.kind === 'returned',
      testsPassed: tests.passed,
      exitCode: tests.exitCode,
      failedCount: tests.failed,
      files: files.length,
      diffLines,
      costUsd: spentBy(ctx, actor) - costBefore,
    },
  };
}

/** Tests passed, then fewer failures, then a smaller diff, then lower cost; only finished candidates with a change. */
export function pickWinner(candidates: readonly Candidate[]): Candidate | null {
  const eligible = candidates.filter((c) => c.finished && c.commit !== null);
  const failures = (c: Candidate) => (c.testsPassed ? 0 : (c.failedCount ?? Number.MAX_SAFE_INTEGER));
  const sorted = [...eligible].sort(
    (x, y) => Number(y.testsPassed) - Number(x.testsPassed) || failures(x) - failures(y) || x.diffLines - y.diffLines || x.costUsd - y.costUsd || x.agent.localeCompare(y.agent),
  );
  return sorted[0] ?? null;
}

function rationaleOf(w: Candidate, all: readonly Candidate[]): string {
  const others = all.filter((c) => c !== w).map((c) => `${c.agent}: ${c.testsPassed ? 'tests passed' : c.finished ? `tests failed (${c.failedCount ?? '?'} failing)` : 'did not finish'}, ${c.diffLines} diff lines, $${c.costUsd.toFixed(4)}`);
  return `${w.agent}: ${w.testsPassed ? 'tests passed' : `fewest failures (${w.failedCount ?? '?'})`}, ${w.diffLines} diff lines, $${w.costUsd.toFixed(4)}${others.length ? `; against ${others.join('; ')}` : ''}`;
}

function spentBy(ctx: RunContext, actor: string): number {
  let usd = 0;
  for (const e of ctx.rec.ledger.entries()) if (e.type === 'LLM_CALL' && e.actor === actor) usd += e.data.costUsd ?? 0;
  return usd;
}
