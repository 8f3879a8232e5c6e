// Best-of-N: one Dev task done by several agents at once, each in its own worktree and branch; the
// real test command judges every candidate; the winner is picked by recorded facts alone (tests
// passed, then fewer failures, then a smaller diff, then lower cost) and becomes the task's result.
// Losing branches stay for inspection. No agent's words take part in the choice.
import type { EventDataOf } from '../../core/ledger/events.js';
import { devAgent } from '../../agents/dev/dev-agent.js';
import type { RunContext } from '../run-context.js';
import { testVerdict } from '../../core/tools/test-verdict.js';
import { runTaskAgent } from '../task-common.js';
import { recordVerdict, runTeamTests } from '../test-run.js';
import type { TaskWorktree } from '../workspace.js';
import { bootAcpDevAgent, type AcpDevAgent, type AcpOutcome, type BootedAcpAgent } from './acp-dev-worker.js';

export type Candidate = EventDataOf<'CANDIDATES_JUDGED'>['candidates'][number];

export interface BestOfResult {
  /** The winner's outcome, to go on as the task's own; without a winner, why none finished. */
  outcome: AcpOutcome;
  /** The winner's checkpoint, for the task's worktree; null when no candidate changed anything. */
  commit: string | null;
}

/** One candidate started: its worktree and, for an external agent, the agent booting in it. */
interface StartedCandidate {
  name: string;
  agent: AcpDevAgent | null;
  /** Rejects when the worktree could not be made or the agent not started (no key, past the deadline). */
  prepared: Promise<{ wt: TaskWorktree; boot: BootedAcpAgent | null }>;
}

/** The candidates of one attempt, started before the task's prompt is written. */
export interface Candidates {
  readonly started: readonly StartedCandidate[];
  /** Stops every candidate's agent: for an attempt that does not go on to runBestOf (harmless after it). */
  close(): Promise<void>;
}

/**
 * Starts the candidates from the attempt's base: each one's worktree is added and its external agent
 * booted (process, initialize, session/new) at once, while the caller prepares the task's own worktree,
 * checks and setup, none of which a candidate needs. Booting is most of an external agent's cost before
 * its first model call, and the candidates' boots compete for the CPU: started here, they overlap the
 * task's preparation instead of following it. `agents`: null for ACIA's own Dev agent.
 */
export function startCandidates(ctx: RunContext, o: { taskId: string; base: string; agents: { name: string; agent: AcpDevAgent | null }[] }): Candidates {
  const started = o.agents.map((a): StartedCandidate => {
    const id = `${o.taskId}-${a.name}`;
    const prepared = (async () => {
      const wt = await ctx.workspace.prepareTask(id, o.base);
      const boot = a.agent ? bootAcpDevAgent(ctx, { agent: { ...a.agent, name: a.name }, actor: `dev:${id}`, taskId: o.taskId, root: wt.path }) : null;
      return { wt, boot };
    })();
    prepared.catch(() => undefined); // seen by runBestOf, or by close()
    return { ...a, prepared };
  });
  return {
    started,
    close: async () => {
      await Promise.all(started.map(async (c) => (await c.prepared.catch(() => null))?.boot?.close()));
    },
  };
}

export async function runBestOf(ctx: RunContext, candidates: Candidates, o: { taskId: string; attempt: number; task: string }): Promise<BestOfResult> {
  // Every candidate ends before the task goes on: one that stops the run (the budget, an interrupt) is
  // rethrown only once the others have stopped too.
  const settled = await Promise.allSettled(candidates.started.map((c) => runCandidate(ctx, o, c)));
  const thrown = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (thrown) {
    await candidates.close();
    throw thrown.reason;
  }
  const runs = settled.map((r) => (r as PromiseFulfilledResult<Awaited<ReturnType<typeof runCandidate>>>).value);
  const judged = runs.map((r) => r.candidate);
  const winner = pickWinner(judged);
  const chosen = winner === null ? undefined : runs.find((r) => r.candidate.agent === winner.agent);
  const record = (rationale: string) => ctx.rec.record('team', 'CANDIDATES_JUDGED', { taskId: o.taskId, attempt: o.attempt, candidates: judged, winner: chosen ? (winner?.agent ?? null) : null, rationale });
  if (winner === null || chosen === undefined) {
    const lost = noWinner(judged, runs.map((r) => r.outcome));
    await record(lost.message);
    return { outcome: lost, commit: null };
  }
  await record(rationaleOf(winner, judged));
  return { outcome: chosen.outcome, commit: winner.commit };
}

async function runCandidate(ctx: RunContext, o: { taskId: string; attempt: number; task: string }, c: StartedCandidate): Promise<{ candidate: Candidate; outcome: AcpOutcome }> {
  const id = `${o.taskId}-${c.name}`;
  const actor = `dev:${id}`;
  const { wt, boot } = await c.prepared;
  const costBefore = spentBy(ctx, actor);
  const outcome: AcpOutcome = boot ? await boot.prompt(o.task) : await runTaskAgent(ctx, { def: devAgent, actor, taskId: o.taskId, root: wt.path, task: o.task });
  const summary = outcome.kind === 'returned' ? outcome.result.summary : `${outcome.kind}: ${outcome.message}`;
  const { commit, files } = await ctx.workspace.checkpoint(id, wt, `acia(${o.taskId}) by ${c.name}: ${summary.split('\n')[0]?.slice(0, 60) ?? ''}\n\nRun: ${ctx.runId}, attempt ${o.attempt}`);
  // The diff's size is counted while the tests run: both are on the slowest candidate's path to the verdict.
  const diffing = commit ? ctx.workspace.diffSize(wt.baseCommit, commit) : Promise.resolve(0);
  diffing.catch(() => undefined); // awaited below; a failure must not go unhandled while the tests run
  let tests: { passed: boolean; exitCode: number | null; failed: number | null } = { passed: false, exitCode: null, failed: null };
  if (outcome.kind === 'returned') {
    const verdict = testVerdict(await runTeamTests(ctx, wt.path), ctx.testCommand ?? 'none');
    tests = { passed: verdict.passed, exitCode: verdict.exitCode, failed: verdict.failedCount };
    // The candidate's own tree: the outcome rule counts a test run only on the commit it names.
    await recordVerdict(ctx, id, verdict, { source: 'team_run', commit: commit ?? wt.baseCommit });
  }
  const diffLines = await diffing;
  return {
    outcome,
    candidate: {
      agent: c.name,
      branch: wt.branch,
      commit,
      finished: outcome.kind === 'returned',
      testsPassed: tests.passed,
      exitCode: tests.exitCode,
      failedCount: tests.failed,
      files: files.length,
      diffLines,
      costUsd: spentBy(ctx, actor) - costBefore,
      ...(outcome.kind === 'returned' ? {} : { notFinished: `${outcome.kind}: ${outcome.message}`.slice(0, 500) }),
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

/**
 * Without a winner, the task's outcome: asking for authentication when every candidate did (no retry
 * mends that), else a failure the attempt may retry, naming each candidate's reason.
 */
function noWinner(judged: readonly Candidate[], outcomes: readonly AcpOutcome[]): Exclude<AcpOutcome, { kind: 'returned' }> {
  const reasons = judged.map((c) => `${c.agent}: ${c.notFinished ?? (c.commit === null ? 'finished without changing anything' : 'not eligible')}`).join('; ');
  if (outcomes.length > 0 && outcomes.every((x) => x.kind === 'auth_required')) return { kind: 'auth_required', turns: 0, message: `no candidate could reach its model: ${reasons}` };
  return { kind: 'protocol_error', turns: 0, message: `no candidate finished with a change: ${reasons}` };
}

function rationaleOf(w: Candidate, all: readonly Candidate[]): string {
  const others = all.filter((c) => c !== w).map((c) => `${c.agent}: ${c.testsPassed ? 'tests passed' : c.finished ? `tests failed (${c.failedCount ?? '?'} failing)` : `did not finish (${c.notFinished ?? 'no reason recorded'})`}, ${c.diffLines} diff lines, $${c.costUsd.toFixed(4)}`);
  return `${w.agent}: ${w.testsPassed ? 'tests passed' : `fewest failures (${w.failedCount ?? '?'})`}, ${w.diffLines} diff lines, $${w.costUsd.toFixed(4)}${others.length ? `; against ${others.join('; ')}` : ''}`;
}

function spentBy(ctx: RunContext, actor: string): number {
  let usd = 0;
  for (const e of ctx.rec.ledger.entries()) if (e.type === 'LLM_CALL' && e.actor === actor) usd += e.data.costUsd ?? 0;
  return usd;
}
