// The proof behind a `succeeded`: the project's tests, run once by the team on the final run-branch
// head when no recorded test run already covers exactly that commit.
import { canonicalJson } from '../core/acm/canonical-json.js';
import type { RunContext } from './run-context.js';
import { runSetupCommand, toolContext } from './task-common.js';
import { syncAddedDependencies } from './dependency-sync.js';

/** Not a valid task id, so it can never collide with a task of the plan. */
export const FINAL_CHECK_ID = '@final';

export async function runFinalTests(ctx: RunContext): Promise<void> {
  const runTests = ctx.deps.tools.builtin.find((t) => t.name === 'run_tests');
  // A fresh worktree at the run head: the tree tested is exactly the commit recorded.
  const wt = await ctx.workspace.prepareTask(FINAL_CHECK_ID, null);
  // The project's setup (installed dependencies, a build) as every task worktree gets it; a failing
  // setup shows in the test output, and the verdict is still the tests' exit code.
  const spec = { id: FINAL_CHECK_ID, capability: 'qa.verify', input: {}, verification: [] };
  await runSetupCommand(ctx, spec, 1, wt);
  await syncAddedDependencies(ctx, spec, 1, wt);
  const result = runTests && ctx.testCommand !== null ? await ctx.deps.tools.call(runTests, {}, toolContext(ctx, wt.path)) : null;
  const data = result?.data ?? {};
  const exitCode = typeof data.exitCode === 'number' ? data.exitCode : null;
  const outputRef = await ctx.rec.blob(
    canonicalJson({ forModel: result?.forModel ?? 'no test command could be run', forDisplay: result?.forDisplay ?? '' }),
  );
  await ctx.rec.record('team', 'VERIFICATION', {
    taskId: FINAL_CHECK_ID,
    passed: exitCode === 0,
    exitCode,
    command: typeof data.command === 'string' ? data.command : (ctx.testCommand ?? 'none'),
    passedCount: typeof data.passed === 'number' ? data.passed : null,
    failedCount: typeof data.failed === 'number' ? data.failed : null,
    outputRef,
    source: 'team_run',
    commit: wt.baseCommit,
  });
}
