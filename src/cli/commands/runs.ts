// `acia runs` and `acia show <runId>`: what ran, how it ended, what it cost, and each step.
import type { Command } from 'commander';
import { AciaError } from '../../core/errors.js';

export function register(program: Command): void {
  program
    .command('runs')
    .description('list the runs in a repository with status, cost and duration')
    .option('--repo <dir>', 'the repository', '.')
    .option('--json', 'print JSON')
    .option('--db [url]', 'list the fleet’s runs in this database instead (bare --db: $ACIA_DATABASE_URL)')
    .addHelpText('after', '\nExample:\n  acia runs --repo ~/src/app')
    .action(async (opts: { repo: string; json?: boolean; db?: string | boolean }) => {
      if (opts.db !== undefined) {
        const { listFleetRunsCommand } = await import('../fleet-action.js');
        return listFleetRunsCommand(opts.db, opts.json ?? false);
      }
      const { listRunsCommand } = await import('../runs-action.js');
      await listRunsCommand(opts.repo, opts.json ?? false);
    });
  program
    .command('show')
    .description('show one run: its goal, plan, tasks, verdicts and every ledger step')
    .argument('[runId]', 'the run (see `acia runs`); the latest when absent')
    .option('--repo <dir>', 'the repository', '.')
    .option('--json', 'print the ledger entries as JSON')
    .option('--output <seq|task>', "print the output of the tool result (or verification) at ledger seq <seq>, or of every tool result of task <task>")
    .option('--db [url]', 'a fleet run: read it from this PostgreSQL database (bare --db: $ACIA_DATABASE_URL)')
    .addHelpText('after', '\nExamples:\n  acia show\n  acia show 20261123-070102-ab12cd\n  acia show 20261123-070102-ab12cd --output 42\n  acia show 20261123-070102-ab12cd --output t2')
    .action(async (given: string | undefined, opts: { repo: string; json?: boolean; output?: string; db?: string | boolean }) => {
      if (opts.db !== undefined) {
        if (given === undefined) throw new AciaError('USAGE', 'acia show --db needs the run id (see `acia runs --db`)');
        const { showFleet } = await import('../fleet-read.js');
        return showFleet(opts.db, given, { json: opts.json ?? false, ...(opts.output === undefined ? {} : { output: opts.output }) });
      }
      const { showRunCommand, showOutputCommand, latestRunId } = await import('../runs-action.js');
      const runId = given ?? (await latestRunId(opts.repo));
      if (opts.output !== undefined) await showOutputCommand(opts.repo, runId, opts.output);
      else await showRunCommand(opts.repo, runId, opts.json ?? false);
    });
}
