// `acia wiki [list | show <page> | rebuild | path]`: the wiki rendered from the ledgers.
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('wiki')
    .description('the team wiki in .acia/wiki: list pages, show one, rebuild from the ledgers, or print its path')
    .argument('[action]', 'list | show | rebuild | path', 'list')
    .argument('[page]', 'for show: a page path such as index.md or runs/<runId>.md')
    .option('--repo <dir>', 'the repository', '.')
    .option('--db [url]', 'the wiki of the fleet runs in this PostgreSQL database, rendered on demand (list and show only; bare --db: $ACIA_DATABASE_URL)')
    .addHelpText('after', '\nExamples:\n  acia wiki\n  acia wiki show index\n  acia wiki show runs/20261123-070102-ab12cd.md\n  acia wiki rebuild')
    .action(async (action: string, page: string | undefined, options: { repo: string; db?: string | boolean }) => {
      if (options.db !== undefined) {
        const { wikiFleet } = await import('../fleet-read.js');
        return wikiFleet(options.db, action, page);
      }
      const { wikiCommand } = await import('./wiki-action.js');
      await wikiCommand(action, page, options.repo);
    });
}
