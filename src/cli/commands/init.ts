// `acia init`: writes .acia/config.json, the memory pages and the local ignore entry.
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('init')
    .description('set up ACIA in a repository: .acia/config.json, memory pages, ignore entry')
    .option('--repo <dir>', 'the repository', '.')
    .option('--force', 'overwrite an existing .acia/config.json')
    .addHelpText('after', '\nExample:\n  acia init && $EDITOR .acia/wiki/memory/conventions.md')
    .action(async (opts: { repo: string; force?: boolean }) => {
      const { initRepo } = await import('../init-repo.js');
      const written = await initRepo(opts.repo, opts.force ?? false);
      for (const line of written) process.stdout.write(`${line}\n`);
    });
}
