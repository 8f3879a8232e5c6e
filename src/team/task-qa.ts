// Runs a QA task (qa.verify, qa.write_tests). The verdict is the exit code of a real test run: the QA
// agent's last run_tests, or, when it made none, a run the team makes itself. Its words never decide.
import { failureExcerpt } from '../core/tools/test-failures.js';
import { detectTestCommand } from '../core/tools/run-tests.js';
import { LOOKED_FOR } from '../core/tools/test-command.js';
import { isTestRun, testVerdict } from '../core/tools/test-verdict.js';
import type { ToolResult } from '../core/tools/types.js';
import { qaAgent } from '../agents/qa/qa-agent.js';
import type { RunContext } from './run-context.js';
import { lessonsOf, maxAttempts, runTaskAgent, startAttempt, taskMessage, toolContext, type TaskOutcome } from './task-common.js';
import { compensationRequired, fatal, policyCheck, undoChange } from './task-policy.js';
import { CompletionGate, mergeHooks } from './user-hooks.js';
import { runChecks } from './task-dev.js';
import { roleNameOf } from './roles.js';
import { recordVerdict, runTeamTests } from './test-run.js';

export async function runQaTask(ctx: RunContext, taskId: string, nextAttempt?: number): Promise<TaskOutcome> {
  const task = ctx.state.tasks.get(taskId)!;
  const spec = task.spec;
  const actor = `qa:${taskId}`;
  const attempt = nextAttempt ?? task.attempts + 1;
  const { wt, denied, setupNote } = await startAttempt(ctx, spec, attempt, null);
  if (denied) return denied;

  let lastTests: ToolResult | null = null;
  const tctx = toolContext(ctx, wt.path, taskId);
  const gate = new CompletionGate(ctx, { actor, root: wt.path, spec, attempt });
  if (ctx.testCommand === null && detectTestCommand(tctx) === null) {
    // Nothing to verify with: a question about the environment for the human, not a failed verification
    // (which would start fix attempts that cannot help).
    const message = `no test command: none configured and none detected (looked for ${LOOKED_FOR})`;
    const human = `${message} — tell ACIA how this project runs its tests: start the run again with --test-command "<cmd>", or set testCommand in .acia/config.json (\`acia config\` shows what it detects); answer skip to finish without this verification`;
    return fatal(ctx, taskId, attempt, message, 'environment_broken', human);
  }
  const extra = [...(setupNote === null ? [] : [setupNote]), ...(task.guidance ? [`Guidance from the human: ${task.guidance}`] : [])];
  const outcome = await runTaskAgent(ctx, {
    def: qaAgent,
    role: roleNameOf(spec.capability, spec.input),
    actor,
    taskId,
    root: wt.path,
    task: taskMessage(ctx, spec, extra),
    gate,
    onResult: (call, result) => {
      if (isTestRun(call.name, result)) lastTests = result;
    },
  });
  if (outcome.kind === 'loop_detected') {
    return fatal(ctx, taskId, attempt, `loop detected: ${outcome.message}`, 'loop_detected', `${actor} is looping: ${outcome.message}`);
  }

  // No test run by the agent (or it claimed a result without one): the team runs the tests itself.
  const source: 'qa_run' | 'team_run' = lastTests === null ? 'team_run' : 'qa_run';
  const tests: ToolResult | null = lastTests ?? (await runTeamTests(ctx, tctx.root));
  const verdict = testVerdict(tests, ctx.testCommand ?? 'none');
  const { passed, exitCode } = verdict;
  const claim = outcome.kind === 'returned' ? outcome.result : null;
  // Tests QA wrote become part of the run when they pass, or always for qa.write_tests. They are
  // committed before the verdict is recorded so the verdict names the exact commit it tested.
  let commit: string | null = null;
  let files: string[] = [];
  if (passed || spec.capability === 'qa.write_tests') {
    ({ commit, files } = await ctx.workspace.checkpoint(taskId, wt, `acia(${taskId}): tests\n\nRun: ${ctx.runId}`));
    if (commit) await ctx.rec.record('team', 'CHECKPOINT', { taskId, attempt, commit, branch: wt.branch, files });
  }
  await recordVerdict(ctx, taskId, verdict, { source, commit: commit ?? wt.baseCommit });

  // The same gates as a dev task: policy judges the task's result (also when QA changed no file: the
  // verdict itself is the result), the task's expressions must hold. The user's task.post hooks judged it
  // in the agent's session already.
  const post = gate.stopped ? { allow: false, reason: `hook ${gate.stopped.hook}: ${gate.stopped.reason}` } : await policyCheck(ctx, 'task.post', spec, files, { hooks: false });
  if (!post.allow && !task.policyOverride) {
    if (commit) {
      await ctx.workspace.prepareTask(taskId, wt.baseCommit);
      await ctx.rec.record('team', 'COMPENSATION_APPLIED', { taskId, reason: `policy: ${post.reason ?? 'denied'}`, resetTo: wt.baseCommit });
    }
    return compensationRequired(ctx, taskId, attempt, post.reason);
  }
  const output: Record<string, unknown> = { passed, exitCode, claimedPassed: claim?.passed ?? null, passedCount: verdict.passedCount, failedCount: verdict.failedCount };
  if (passed) {
    const failedCheck = await runChecks(ctx, taskId, spec.verification, output);
    if (failedCheck !== null) {
      const message = `verification ${failedCheck} is false`;
      if (attempt < maxAttempts(ctx, spec, 'FATAL_ERROR')) {
        await ctx.rec.record('team', 'RETRY_SCHEDULED', { taskId, attempt: attempt + 1, delayMs: 0, reason: message });
        return runQaTask(ctx, taskId, attempt + 1);
      }
      await ctx.rec.record('team', 'TASK_FAILED', { taskId, attempt, errorKind: 'FATAL_ERROR', message });
      return { kind: 'failed', errorKind: 'FATAL_ERROR', message };
    }
  }
  if (commit) {
    const gateMerge = await mergeHooks(ctx, spec, attempt, wt, files, commit);
    if (!gateMerge.allow && !task.policyOverride) return undoChange(ctx, taskId, attempt, wt, `hook ${gateMerge.hook}: ${gateMerge.reason}`);
    const merged = await ctx.workspace.merge(taskId);
    await ctx.rec.record('team', 'MERGE', { taskId, into: ctx.workspace.runBranch, commit: merged.commit, conflict: merged.conflict, files: merged.files });
    if (merged.conflict) return fatal(ctx, taskId, attempt, `merge conflict in ${merged.files.join(', ')}`, 'merge_conflict', `tests written by ${taskId} conflict with merged work`);
  }
  const summary = claim?.summary ?? `no QA report (${outcome.kind}); verdict from the team's own test run`;
  if (passed) {
    await ctx.rec.record('team', 'TASK_COMPLETED', { taskId, attempt, output, summary, ...lessonsOf(claim?.passed === passed ? claim : null) });
    return { kind: 'completed' };
  }
  if (verdict.cannotRun !== null) {
    // A broken environment is no code bug: a fix task could only burn an iteration on it. Ask the human now.
    const why = `the test command could not run: ${verdict.cannotRun}`;
    const advice = verdict.advice ?? "install the project's dependencies in your checkout (npm install, pip install into .venv), or set testCommand / setup in .acia/config.json";
    const human = `${why} — the environment, not the code ($ ${verdict.command}): ${advice}; then answer retry`;
    return fatal(ctx, taskId, attempt, why, 'environment_broken', human, failureExcerpt(verdict.forModel, { maxBytes: 6000 }));
  }
  const message = `verification failed: exit code ${exitCode ?? 'none'}${verdict.failedCount === null ? '' : `, ${verdict.failedCount} failed`}${claim?.passed ? ' (the QA agent claimed a pass)' : ''}`;
  await ctx.rec.record('team', 'TASK_FAILED', { taskId, attempt, errorKind: 'FATAL_ERROR', message, ...lessonsOf(claim?.passed === passed ? claim : null) });
  return { kind: 'verification_failed', message };
}
