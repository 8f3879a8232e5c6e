// The proof behind a `succeeded`: the project's tests, run once by the team on the final run-branch
// head when no recorded test run already covers exactly that commit.
import { testVerdict } from '../core/tools/test-verdict.js';
import type { RunContext } from './run-context.js';
import { runSetupCommand } from './task-common.js';
import { recordVerdict, runTeamTests } from './test-run.js';
import { syncAddedDependencies } from './dependency-sync.js';

/** Not a valid task id, so it can never collide with a task of the plan. */
export const FINAL_CHECK_ID = '@final';

export async function runFinalTests(ctx: RunContext): Promise<void> {
  // A fresh worktree at the run head: the tree tested is exactly the commit recorded.
  const wt = await ctx.workspace.prepareTask(FINAL_CHECK_ID, null);
  // The project's setup (installed dependencies, a build) as every task worktree gets it; a failing
  // setup shows in the test output, and the verdict is still the tests' exit code.
  const spec = { id: FINAL_CHECK_ID, capability: 'qa.verify', input: {}, verification: [] };
  await runSetupCommand(ctx, spec, 1, wt);
  await syncAddedDependencies(ctx, spec, 1, wt);
  const result = ctx.testCommand !== null ? await runTeamTests(ctx, wt.path) : null;
  await recordVerdict(ctx, FINAL_CHECK_ID, testVerdict(result, ctx.testCommand ?? 'none'), { source: 'team_run', commit: wt.baseCommit });
}
