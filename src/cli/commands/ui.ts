// `acia ui`: a local web view of the runs of a repository (or a fleet), live as they go.
import type { Command } from 'commander';

export interface UiFlags {
  repo: string;
  db?: string | boolean;
  port?: string;
  open?: boolean;
}

export function register(program: Command): void {
  program
    .command('ui')
    .description('a live web view of the runs: plans as graphs, tasks, tests, diffs, costs, and answers to the team’s questions')
    .option('--repo <dir>', 'the repository whose runs to show', '.')
    .option('--db [url]', 'show the fleet’s runs in this database instead (bare --db: $ACIA_DATABASE_URL)')
    .option('--port <n>', 'the port on 127.0.0.1 (default: a free one)')
    .option('--no-open', 'print the URL without opening a browser')
    .addHelpText(
      'after',
      '\nThe URL carries a random token; the server refuses any request without it. It listens on\n127.0.0.1 only, until Ctrl-C.\n\nExamples:\n  acia ui\n  acia ui --repo ~/src/app --port 8787\n  acia ui --db postgres://acia@db/acia',
    )
    .action(async (flags: UiFlags) => {
      const { uiCommand } = await import('../ui-action.js');
      process.exitCode = await uiCommand(flags);
    });
}
