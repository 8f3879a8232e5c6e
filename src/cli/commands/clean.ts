// `acia clean`: removes finished runs' worktrees and branches; never a run a human still has to answer.
import type { Command } from 'commander';

export interface CleanFlags {
  repo: string;
  olderThan?: string;
  dryRun?: boolean;
}

export function register(program: Command): void {
  program
    .command('clean')
    .description('remove the git branches and worktrees of finished runs (ledgers and wiki stay)')
    .option('--older-than <dur>', 'only runs whose last step is older than this: 30m, 12h, 7d, 2w')
    .option('--dry-run', 'print what would be removed, remove nothing')
    .option('--repo <dir>', 'the repository (any directory inside it)', '.')
    .addHelpText(
      'after',
      '\nA run waiting for a human (an open question or a budget stop) and a run that may still be\nrunning are never touched. The ledger in .acia/runs/<runId> is kept: `acia show` and `acia verify` still work.\n\nExamples:\n  acia clean --dry-run\n  acia clean --older-than 7d',
    )
    .action(async (flags: CleanFlags) => {
      const { cleanCommand } = await import('../clean-action.js');
      process.exitCode = await cleanCommand(flags);
    });
}
