// `acia cancel <runId>`: stop a run at its next safe point, locally or on the fleet (--db).
import type { Command } from 'commander';

export interface CancelFlags {
  repo: string;
  db?: string | boolean;
  wait: boolean;
  timeout: string;
  json?: boolean;
}

export function register(program: Command): void {
  program
    .command('cancel')
    .description('stop a run at its next safe point: its ledger ends `cancelled` and it cannot be resumed')
    .argument('<runId>', 'the run (see `acia runs`, or `acia runs --db` for the fleet)')
    .option('--repo <dir>', 'the repository', '.')
    .option('--db [url]', 'a fleet run: ask the workers through this database (bare --db: $ACIA_DATABASE_URL)')
    .option('--no-wait', 'ask, and return without waiting for the run to stop')
    .option('--timeout <seconds>', 'how long to wait for a running run to stop', '60')
    .option('--json', 'print the outcome as JSON')
    .addHelpText(
      'after',
      '\nA running run stops between steps: its model call or command in flight is aborted, nothing is merged after it.\n' +
        'A run waiting for an answer, stopped by its budget or an error, or left by a dead process is closed at once;\n' +
        'a fleet run nobody has started never starts. Exit codes: 0 cancelled (or asked, with --no-wait),\n' +
        '1 it ended another way first or did not stop in time, 2 usage (no such run, or it is finished).\n\n' +
        'Examples:\n  acia cancel 20261123-070102-ab12cd\n  acia cancel 20261123-070102-ab12cd --db postgres://alice@db/fleet\n  acia cancel 20261123-070102-ab12cd --db --no-wait',
    )
    .action(async (runId: string, flags: CancelFlags) => {
      const { cancelCommand } = await import('../cancel-action.js');
      process.exitCode = await cancelCommand(runId, flags);
    });
}
