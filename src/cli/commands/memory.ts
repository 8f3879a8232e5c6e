// `acia memory [show]`: prints the team's memory pages, the ones each run reads into its context.
import type { Command } from 'commander';
import { AciaError } from '../../core/errors.js';

export function register(program: Command): void {
  program
    .command('memory')
    .description('show the team memory pages (.acia/wiki/memory)')
    .argument('[action]', 'show', 'show')
    .option('--repo <dir>', 'the repository', '.')
    .addHelpText('after', '\nThe pages live in .acia/wiki/memory/*.md; edit them by hand.\n\nExample:\n  acia memory --repo ~/src/app')
    .action(async (action: string, options: { repo: string }) => {
      if (action !== 'show') throw new AciaError('USAGE', `unknown memory action ${action}: use show`);
      const { memoryCommand } = await import('./wiki-action.js');
      await memoryCommand(options.repo);
    });
}
