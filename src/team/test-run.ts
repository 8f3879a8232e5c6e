// The team's own test runs (QA's fallback, the final check, best-of-N candidates) and how a verdict is
// recorded: the run_tests every agent has, read by the one testVerdict (core/tools/test-verdict.ts).
import { canonicalJson } from '../core/acm/canonical-json.js';
import { runTests } from '../core/tools/run-tests.js';
import type { TestVerdict } from '../core/tools/test-verdict.js';
import type { ToolResult } from '../core/tools/types.js';
import type { RunContext } from './run-context.js';
import { toolContext } from './task-common.js';

/** Runs the project's tests in `root`; null when this run has no run_tests tool. */
export async function runTeamTests(ctx: RunContext, root: string): Promise<ToolResult | null> {
  const tool = ctx.deps.tools.builtin.find((t) => t.name === runTests.name);
  return tool ? ctx.deps.tools.call(tool, {}, toolContext(ctx, root)) : null;
}

/** Records a verdict as the run's VERIFICATION of `taskId`, on the commit whose tree was tested. */
export async function recordVerdict(ctx: RunContext, taskId: string, v: TestVerdict, o: { source: 'qa_run' | 'team_run'; commit: string }): Promise<void> {
  const outputRef = await ctx.rec.blob(canonicalJson({ forModel: v.forModel, forDisplay: v.forDisplay }));
  await ctx.rec.record('team', 'VERIFICATION', {
    taskId,
    passed: v.passed,
    exitCode: v.exitCode,
    command: v.command,
    passedCount: v.passedCount,
    failedCount: v.failedCount,
    outputRef,
    source: o.source,
    commit: o.commit,
    ...(v.cannotRun === null ? {} : { cannotRun: v.cannotRun }),
  });
}
