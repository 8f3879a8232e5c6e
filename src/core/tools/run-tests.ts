// run_tests: the configured or detected test command in the sandbox; the verdict is the exit code plus parsed counts.
import * as nodePath from 'node:path';
import { z } from 'zod';
import { AciaError } from '../errors.js';
import { defineTool } from './define-tool.js';
import { resolvePath } from './fs-access.js';
import { describeOutcome } from './run-command.js';
import { environmentProblem, failureExcerpt } from './test-failures.js';
import { parseTestSummary } from './test-summary.js';
import { truncateMiddle } from './truncate.js';
import type { ToolContext } from './types.js';

/** What a test run's result says (its `data`): read it with this schema (core/tools/test-verdict.ts), never by hand. */
export const RunTestsData = z.object({
  /** Why the command could not run at all (the "not found" line), when that is why it failed. */
  cannotRun: z.string().optional(),
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
    if (base === null) throw new AciaError('INPUT_INVALID', 'no test command configured or detected (no package.json test script, pytest, go.mod or Cargo.toml)');
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
    const cannotRun = ok || outcome.timedOut ? null : environmentProblem(exitCode, outcome.output);
    const verdict = `${ok ? 'TESTS PASSED' : cannotRun ? 'TESTS COULD NOT RUN' : 'TESTS FAILED'} ${status} ${counts}${cannotRun ? `: ${cannotRun}` : ''}\n$ ${command}`;
    // A failed run keeps its failure reports (wherever they are), not just its head and tail.
    const shown = ok ? truncateMiddle(`${verdict}\n${outcome.output}`).text : `${verdict}\n${failureExcerpt(outcome.output, { maxBytes: 24_000, headLines: 10, tailLines: 30 })}`;
    return {
      ok,
      forModel: shown,
      forDisplay: verdict,
      data: {
        ...(cannotRun ? { cannotRun } : {}),
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

/** package.json scripts.test -> npm test; pytest markers; go.mod; Cargo.toml. */
export function detectTestCommand(ctx: Pick<ToolContext, 'fs' | 'root'>): string | null {
  return detectTestCommandWithSource(ctx)?.command ?? null;
}

/** The detected test command and the file it was detected from (for `acia config`). */
export function detectTestCommandWithSource(ctx: Pick<ToolContext, 'fs' | 'root'>): { command: string; source: string } | null {
  const has = (f: string): boolean => ctx.fs.existsSync(nodePath.join(ctx.root, f));
  return testCommandFor({
    has,
    read: (f) => {
      try {
        return String(ctx.fs.readFileSync(nodePath.join(ctx.root, f), 'utf8'));
      } catch {
        return null;
      }
    },
  });
}

/** The detection rules over any view of the files (a checkout, or git objects before one exists). */
export function testCommandFor(files: { has: (path: string) => boolean; read: (path: string) => string | null }): { command: string; source: string } | null {
  const { has } = files;
  if (has('package.json')) {
    try {
      const pkg = JSON.parse(files.read('package.json') ?? '') as { scripts?: Record<string, unknown> };
      const test = pkg.scripts?.test;
      if (typeof test === 'string' && !test.includes('no test specified')) return { command: 'npm test --', source: 'package.json scripts.test' };
    } catch {
      /* unreadable package.json: try the others */
    }
  }
  const py = ['pytest.ini', 'pyproject.toml', 'setup.cfg', 'tox.ini', 'conftest.py', 'tests/conftest.py'].find(has);
  if (py !== undefined) return { command: 'python3 -m pytest', source: py };
  if (has('go.mod')) return { command: 'go test ./...', source: 'go.mod' };
  if (has('Cargo.toml')) return { command: 'cargo test', source: 'Cargo.toml' };
  return null;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
