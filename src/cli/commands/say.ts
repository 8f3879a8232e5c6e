// `acia say <runId> "…"`: a message to a running team (the PM, or one task), delivered where --mode asks.
import type { Command } from 'commander';

export interface SayFlags {
  repo: string;
  task?: string;
  mode: string;
  db?: string | boolean;
  json?: boolean;
}

export function register(program: Command): void {
  program
    .command('say')
    .description('send a message to a running team: the PM (which may amend the plan) or one task')
    .argument('<runId>', 'the run (see `acia runs`)')
    .argument('<message>', 'what to tell the agent, in plain words')
    .option('--repo <dir>', 'the repository', '.')
    .option('--task <id>', "the task whose agent gets it (default: the PM)")
    .option('--db [url]', 'a fleet run: through this database (bare --db: $ACIA_DATABASE_URL); only its submitter may message it')
    .option('--mode <mode>', 'queue: at its next turn; steer: at its next tool boundary; interrupt: stop its model call in flight and deliver now', 'queue')
    .option('--json', 'print the outcome as JSON')
    .addHelpText(
      'after',
      '\nEvery message is a ledger entry with its author; a replay delivers it where it was delivered. A message\n' +
        'to a run nobody runs now waits for `acia resume`. A finished run or task cannot be messaged (exit 2).\n\n' +
        'Examples:\n  acia say 20261123-070102-ab12cd "also keep the old flag working"\n' +
        '  acia say 20261123-070102-ab12cd --task t2 --mode steer "the helper is in src/util/dates.ts"\n' +
        '  acia say 20261123-070102-ab12cd --task t2 --mode interrupt "stop: do not touch the lockfile"\n' +
        '  acia say 20261123-070102-ab12cd --task t2 --db "the helper is in src/util/dates.ts"',
    )
    .action(async (runId: string, message: string, flags: SayFlags) => {
      const { sayCommand } = await import('../say-action.js');
      process.exitCode = await sayCommand(runId, message, flags);
    });
}
