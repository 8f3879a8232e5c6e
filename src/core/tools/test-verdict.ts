// One reading of a test run: the verdict is its exit code (never words an agent wrote), with the counts
// the runner printed and, when the command could not start at all, why. QA, the team's final check and
// best-of-N judge test runs through this one function.
import { RunTestsData, runTests } from './run-tests.js';
import type { ToolResult } from './types.js';

export interface TestVerdict {
  passed: boolean;
  exitCode: number | null;
  /** The command that ran, or the one that would have when none could. */
  command: string;
  passedCount: number | null;
  failedCount: number | null;
  /** Why the command could not run at all, when that is why it failed, and what to do about it. */
  cannotRun: string | null;
  advice: string | null;
  /** The output as the model saw it, and the line for humans. */
  forModel: string;
  forDisplay: string;
}

/** `result`: a run_tests result (an agent's or the team's own), or null when no test command could run. */
export function testVerdict(result: ToolResult | null, command: string): TestVerdict {
  const parsed = result === null ? null : RunTestsData.safeParse(result.data);
  const d = parsed?.success ? parsed.data : null;
  const exitCode = d?.exitCode ?? null;
  return {
    passed: exitCode === 0,
    exitCode,
    command: d?.command ?? command,
    passedCount: d?.passed ?? null,
    failedCount: d?.failed ?? null,
    cannotRun: exitCode !== 0 ? (d?.cannotRun ?? null) : null,
    advice: exitCode !== 0 ? (d?.advice ?? null) : null,
    forModel: result?.forModel ?? 'no test command could be run',
    forDisplay: result?.forDisplay ?? '',
  };
}

/** An agent's tool call that was a test run that ran (an exit code to judge by). */
export function isTestRun(toolName: string, result: ToolResult): boolean {
  if (toolName !== runTests.name) return false;
  const parsed = RunTestsData.safeParse(result.data);
  return parsed.success && parsed.data.exitCode !== null;
}
