// run_command: a shell command in the worktree, through the injected runner (the sandbox).
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { environmentProblem } from './test-failures.js';
import { registryUnreachable, runsInstaller } from '../sandbox/installers.js';
import { truncateMiddle } from './truncate.js';
import type { CommandOutcome } from './types.js';

export const runCommand = defineTool({
  name: 'run_command',
  description:
    'Run a shell command (sh -c) in the repository root inside the sandbox: no network, only the repository is writable. Returns exit code and output (long output is cut in the middle).',
  input: z.strictObject({
    command: z.string().min(1).max(20_000),
    timeout_s: z.number().int().min(1).max(3600).optional().describe('wall-clock limit in seconds (capped by the configured limit)'),
  }),
  output: z.object({ cannotRun: z.string().optional(), exitCode: z.number().nullable(), signal: z.string().nullable(), timedOut: z.boolean(), truncated: z.boolean(), durationMs: z.number() }),
  readOnly: false,
  run: async (input, ctx) => {
    const timeoutS = Math.min(input.timeout_s ?? ctx.commandTimeoutS, ctx.commandTimeoutS);
    const outcome = await ctx.runner.run(input.command, {
      cwd: ctx.root,
      timeoutMs: timeoutS * 1000,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    const status = describeOutcome(outcome, timeoutS);
    return {
      ok: outcome.exitCode === 0 && !outcome.timedOut,
      forModel: truncateMiddle(`${status}\n${outcome.output}`).text,
      forDisplay: `$ ${input.command}\n${status}`,
      data: { ...cannotRunOf(outcome), ...installerOf(input.command, outcome), exitCode: outcome.exitCode, signal: outcome.signal, timedOut: outcome.timedOut, truncated: outcome.truncated, durationMs: outcome.durationMs },
    };
  },
});

export function describeOutcome(o: CommandOutcome, timeoutS: number): string {
  if (o.timedOut) return `[timed out after ${timeoutS}s; the whole process tree was killed]`;
  if (o.exitCode === null) return `[killed by ${o.signal ?? 'a signal'}]`;
  return `[exit code ${o.exitCode}]`;
}

/**
 * For a command that installs dependencies: `installer`, and when it failed because no registry could be
 * reached, `registryUnreachable` with the line that shows it (the dev task then asks the human).
 */
function installerOf(command: string, o: CommandOutcome): { installer?: true; registryUnreachable?: string } {
  if (!runsInstaller(command)) return {};
  const line = o.exitCode === 0 || o.timedOut ? null : registryUnreachable(o.output);
  return line === null ? { installer: true } : { installer: true, registryUnreachable: line };
}

/** `cannotRun` for a command that could not start at all (exit 127/126): the line that says why. */
function cannotRunOf(o: CommandOutcome): { cannotRun?: string } {
  if (o.timedOut || (o.exitCode !== 127 && o.exitCode !== 126)) return {};
  const why = environmentProblem(o.exitCode, o.output);
  return why === null ? {} : { cannotRun: why };
}
