// run_tests: the configured or detected test command in the sandbox; the verdict is the exit code plus parsed counts.
import * as nodePath from 'node:path';
import { z } from 'zod';
import { AciaError } from '../errors.js';
import { defineTool } from './define-tool.js';
import { resolvePath } from './fs-access.js';
import { describeOutcome } from './run-command.js';
import { declaredModules } from './declared-modules.js';
import { classifyEnvironmentProblem } from './environment-problem.js';
import { failureExcerpt } from './test-failures.js';
import { parseTestSummary } from './test-summary.js';
import { LOOKED_FOR, testCommandFor, type DetectedTestCommand, type EnvironmentFacts } from './test-command.js';
import { truncateMiddle } from './truncate.js';
import type { ToolContext } from './types.js';

/** What a test run's result says (its `data`): read it with this schema (core/tools/test-verdict.ts), never by hand. */
export const RunTestsData = z.object({
  /** Why the command could not run at all (the "not found" line), when that is why it failed. */
  cannotRun: z.string().optional(),
  /** What kind of environment problem that is, and what to do about it. */
  cannotRunKind: z.string().optional(),
  advice: z.string().optional(),
  exitCode: z.number().nullable(),
  passed: z.number().nullable(),
  failed: z.number().nullable(),
  skipped: z.number().optional(),
  framework: z.string().nullable(),
  command: z.string(),
  timedOut: z.boolean(),
});
export type RunTestsData = z.infer<typeof RunTestsData>;

export const runTests = defineTool({
  name: 'run_tests',
  description:
    "Run the project's test command in the sandbox (configured, or detected: npm test, pytest, go test, cargo test). Optional path narrows it to a file or directory. Reports exit code and passed/failed counts.",
  input: z.strictObject({
    path: z.string().min(1).optional().describe('test file or directory relative to the repository root'),
  }),
  output: RunTestsData,
  readOnly: false,
  run: async (input, ctx) => {
    const base = ctx.testCommand ?? detectTestCommand(ctx);
    if (base === null) throw new AciaError('INPUT_INVALID', `no test command configured or detected (looked for ${LOOKED_FOR})`);
    let command = base;
    if (input.path !== undefined) {
      const target = resolvePath(ctx, input.path);
      command = `${base} ${shellQuote(target.rel === '' ? '.' : target.rel)}`;
    }
    const outcome = await ctx.runner.run(command, {
      cwd: ctx.root,
      timeoutMs: ctx.commandTimeoutS * 1000,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    const summary = parseTestSummary(outcome.output);
    const exitCode = outcome.exitCode;
    const passed = summary?.passed ?? null;
    const failed = summary?.failed ?? null;
    const ok = exitCode === 0 && !outcome.timedOut;
    const counts = summary ? `${summary.passed} passed, ${summary.failed} failed${summary.skipped ? `, ${summary.skipped} skipped` : ''} (${summary.framework})` : 'no test summary recognised';
    const status = describeOutcome(outcome, ctx.commandTimeoutS);
    // A run that could not start (exit 127, no pytest) says why on its first line: that is no code bug.
    const problem = ok || outcome.timedOut ? null : classifyEnvironmentProblem(exitCode, outcome.output, { isDeclared: declaredModules(ctx) });
    const cannotRun = problem?.line ?? null;
    const verdict = `${ok ? 'TESTS PASSED' : cannotRun ? 'TESTS COULD NOT RUN' : 'TESTS FAILED'} ${status} ${counts}${cannotRun ? `: ${cannotRun}` : ''}\n$ ${command}`;
    // A failed run keeps its failure reports (wherever they are), not just its head and tail.
    const shown = ok ? truncateMiddle(`${verdict}\n${outcome.output}`).text : `${verdict}\n${failureExcerpt(outcome.output, { maxBytes: 24_000, headLines: 10, tailLines: 30 })}`;
    return {
      ok,
      forModel: shown,
      forDisplay: verdict,
      data: {
        ...(problem ? { cannotRun: problem.line, cannotRunKind: problem.kind, advice: problem.advice } : {}),
        exitCode,
        passed,
        failed,
        ...(summary?.skipped !== undefined ? { skipped: summary.skipped } : {}),
        framework: summary?.framework ?? null,
        command,
        timedOut: outcome.timedOut,
      },
    };
  },
});

/** The detected test command for a worktree or checkout (see test-command.ts), or null. */
export function detectTestCommand(ctx: Pick<ToolContext, 'fs' | 'root'>, facts: EnvironmentFacts = {}): string | null {
  return detectTestCommandWithSource(ctx, facts)?.command ?? null;
}

/** The detected test command, the file it was detected from and why (for `acia config`). */
export function detectTestCommandWithSource(ctx: Pick<ToolContext, 'fs' | 'root'>, facts: EnvironmentFacts = {}): DetectedTestCommand | null {
  const has = (f: string): boolean => ctx.fs.existsSync(nodePath.join(ctx.root, f));
  return testCommandFor(
    {
      has,
      read: (f) => {
        try {
          return String(ctx.fs.readFileSync(nodePath.join(ctx.root, f), 'utf8'));
        } catch {
          return null;
        }
      },
    },
    facts,
  );
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
