// `acia logs <runId>`: a run's events from its ledger, as the progress view prints them.
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('logs')
    .description('print one run’s events from its ledger as the progress view prints them (for a fleet run: from every worker that ran it)')
    .argument('<runId>', 'the run (see `acia runs`, or `acia runs --db`)')
    .option('--repo <dir>', 'the repository', '.')
    .option('--db [url]', 'a fleet run: read it from this PostgreSQL database (bare --db: $ACIA_DATABASE_URL)')
    .option('-f, --follow', 'keep printing entries as they are appended, until the run’s session ends')
    .option('--json', 'the entries as JSON, one a line')
    .addHelpText('after', '\nExamples:\n  acia logs 20261123-070102-ab12cd\n  acia logs 20261123-070102-ab12cd --follow\n  acia logs 20261123-070102-ab12cd --db --follow')
    .action(async (runId: string, flags: { repo: string; db?: string | boolean; follow?: boolean; json?: boolean }) => {
      const { logsCommand } = await import('../logs-action.js');
      process.exitCode = await logsCommand(runId, flags);
    });
}
