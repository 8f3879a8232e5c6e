// run_setup: the configured `setup` command (e.g. `npm run build`), run by the team — never offered to an
// agent — in the sandbox of each task worktree before its agent starts. Recorded like any tool call.
import { z } from 'zod';
import { AciaError } from '../errors.js';
import { defineTool } from './define-tool.js';
import { describeOutcome } from './run-command.js';
import { classifyEnvironmentProblem } from './environment-problem.js';
import { failureExcerpt } from './test-failures.js';
import { truncateMiddle } from './truncate.js';

export const runSetup = defineTool({
  name: 'run_setup',
  description: "Run the project's configured setup command (config `setup`) in the sandbox of a task worktree.",
  input: z.strictObject({}),
  output: z.object({ exitCode: z.number().nullable(), command: z.string(), timedOut: z.boolean(), durationMs: z.number(), cannotRun: z.string().optional() }),
  readOnly: false,
  run: async (_input, ctx) => {
    const command = ctx.setupCommand;
    if (command === undefined) throw new AciaError('INPUT_INVALID', 'no setup command is configured');
    const outcome = await ctx.runner.run(command, {
      cwd: ctx.root,
      timeoutMs: ctx.commandTimeoutS * 1000,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    const ok = outcome.exitCode === 0 && !outcome.timedOut;
    const problem = ok || outcome.timedOut ? null : classifyEnvironmentProblem(outcome.exitCode, outcome.output);
    const cannotRun = problem?.line ?? null;
    const status = describeOutcome(outcome, ctx.commandTimeoutS);
    const head = `SETUP ${ok ? 'DONE' : 'FAILED'} ${status}${cannotRun ? `: ${cannotRun}` : ''}\n$ ${command}`;
    return {
      ok,
      forModel: ok ? truncateMiddle(`${head}\n${outcome.output}`).text : `${head}\n${failureExcerpt(outcome.output, { maxBytes: 8000 })}`,
      forDisplay: head,
      data: { exitCode: outcome.exitCode, command, timedOut: outcome.timedOut, durationMs: outcome.durationMs, ...(problem ? { cannotRun: problem.line, advice: problem.advice } : {}) },
    };
  },
});
