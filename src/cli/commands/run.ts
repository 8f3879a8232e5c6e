// `acia run` and `acia resume`: the team on a repository.
import type { Command } from 'commander';

export interface RunFlags {
  repo: string;
  model?: string;
  parallel?: string;
  maxIterations?: string;
  maxCostUsd?: string;
  maxTokens?: string;
  maxMinutes?: string;
  sandbox?: string;
  testCommand?: string;
  devAgent?: string;
  devAgents?: string;
  includeUncommitted?: boolean;
  forceUncommitted?: boolean;
  apply?: boolean;
  allowIgnored?: boolean;
  json?: boolean;
  quiet?: boolean;
  debug?: boolean;
  answer?: string;
  approvePlan?: boolean;
}

export function addRunOptions(cmd: Command): Command {
  return cmd
    .option('--repo <dir>', 'the repository (any directory inside it)', '.')
    .option('--model <spec>', 'anthropic:<id>, openai:<id> or scripted:<file>; per role: pm=<spec>,dev=<spec>,qa=<spec> (a bare spec beside them is every other role\'s)')
    .option('--parallel <n>', 'tasks run at once, each in its own worktree')
    .option('--max-iterations <n>', 'fix iterations after failed verification before asking a human')
    .option('--max-cost-usd <usd>', 'stop before a model call would pass this cost')
    .option('--max-tokens <n>', 'stop before a model call would pass this many tokens')
    .option('--max-minutes <m>', 'stop after this many minutes')
    .option('--sandbox <mode>', 'auto | bwrap | off (off runs commands unsandboxed, after a warning)')
    .option('--test-command <cmd>', 'the command that runs the tests (detected when absent)')
    .option('--dev-agent <agent>', 'who does Dev tasks: acia (default), a name from devAgents in your config, or acp:<command>')
    .option('--dev-agents <a,b,c>', 'best of N: several agents do each Dev task at once, judged by real test runs (same as --dev-agent a,b,c)')
    .option('--json', 'NDJSON events on stdout (schema: schemas/events.schema.json); human text on stderr')
    .option('--quiet', 'print only the final summary')
    .option('--debug', 'stack traces and token-level output');
}

export function register(program: Command): void {
  addRunOptions(
    program
      .command('run')
      .description('plan and carry out a change on a repository with a PM, Dev and QA agents')
      .argument('<task>', 'what to do, in plain words')
      .option('--include-uncommitted', 'snapshot uncommitted changes (tracked, and untracked files git does not ignore) into the run’s base commit')
      .option('--force-uncommitted', 'with --include-uncommitted: take more than 1000 untracked files')
      .option('--apply', 'after success, merge the run branch into your current branch')
      .option('--allow-ignored', 'with --apply: merge even when the run adds paths your checkout ignores')
      .option('--approve-plan', 'stop after planning until you approve the plan, switch to the other one, edit it or reject it with feedback'),
  )
    .addHelpText(
      'after',
      '\nThe work happens on branch acia/<runId> in worktrees under .acia/worktrees; your checkout is\nuntouched unless --apply. Exit codes: 0 succeeded, 1 failed, 2 usage, 3 awaiting a human,\n4 budget exhausted, 5 cancelled, 130 interrupted.\n\nExamples:\n  acia run "add a --json flag to the export command"\n  acia run "fix the flaky date test" --parallel 1 --max-cost-usd 2\n  acia run "rename Foo to Bar" --model scripted:script.json --sandbox off',
    )
    .action(async (task: string, flags: RunFlags) => {
      const { runCommand } = await import('../run-action.js');
      process.exitCode = await runCommand({ kind: 'run', goal: task }, flags);
    });

  addRunOptions(
    program
      .command('resume')
      .description('continue a run from its ledger (the latest unfinished one when no id is given)')
      .argument('[runId]', 'the run to resume')
      .option('--answer <text>', 'your answer to the open escalation: guidance text, or retry | skip | approve | abort')
      .option('--db [url]', 'a fleet run: record the answer there (or, without --answer, continue a run that stopped on an error) and queue it for a worker (bare --db: $ACIA_DATABASE_URL)')
      .option('--apply', 'after success, merge the run branch into your current branch')
      .option('--allow-ignored', 'with --apply: merge even when the run adds paths your checkout ignores'),
  )
    .addHelpText('after', '\nExamples:\n  acia resume\n  acia resume 20261123-070102-ab12cd --answer "use Intl.Segmenter for words"\n  acia resume --answer skip')
    .action(async (runId: string | undefined, flags: RunFlags & { db?: string | boolean }) => {
      if (flags.db !== undefined) {
        const { resumeFleetCommand } = await import('../fleet-action.js');
        process.exitCode = await resumeFleetCommand(runId, flags.answer, flags.db);
        return;
      }
      const { runCommand } = await import('../run-action.js');
      process.exitCode = await runCommand({ kind: 'resume', ...(runId === undefined ? {} : { runId }) }, flags);
    });
}
