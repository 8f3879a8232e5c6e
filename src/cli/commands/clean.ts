// `acia clean`: removes finished runs' worktrees and branches; a run that can still go on only with --all.
import type { Command } from 'commander';

export interface CleanFlags {
  repo: string;
  olderThan?: string;
  dryRun?: boolean;
  all?: boolean;
}

export function register(program: Command): void {
  program
    .command('clean')
    .description('remove the git branches and worktrees of finished runs (ledgers and wiki stay)')
    .option('--older-than <dur>', 'only runs whose last step is older than this: 30m, 12h, 7d, 2w')
    .option('--dry-run', 'print what would be removed, remove nothing')
    .option('--all', 'also runs that could still be resumed (waiting for an answer, stopped by the budget or an error, interrupted); never one running now')
    .option('--repo <dir>', 'the repository (any directory inside it)', '.')
    .addHelpText(
      'after',
      '\nA run that can still be resumed (an open question, a budget stop, an error, an interruption) keeps its\nbranches unless --all; a run going on right now is never touched. The ledger in .acia/runs/<runId> is\nkept: `acia show` and `acia verify` still work, and `acia resume` refuses a run whose branch is gone.\n\nExamples:\n  acia clean --dry-run\n  acia clean --older-than 7d\n  acia clean --all',
    )
    .action(async (flags: CleanFlags) => {
      const { cleanCommand } = await import('../clean-action.js');
      process.exitCode = await cleanCommand(flags);
    });
}
