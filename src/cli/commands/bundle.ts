// `acia bundle <runId>`: assembles the run's replay bundle with a manifest of checksums.
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('bundle')
    .description('assemble the replay bundle of a run (ACM artifacts, engine trace, ledger, checksums)')
    .argument('<runId>', 'the run')
    .option('--out <dir>', 'where to write it (default .acia/bundles/<runId>)')
    .option('--repo <dir>', 'the repository', '.')
    .option('--db [url]', 'a fleet run: read it from this PostgreSQL database (bare --db: $ACIA_DATABASE_URL)')
    .addHelpText('after', '\nExamples:\n  acia bundle 20261123-070102-ab12cd\n  acia bundle 20261123-070102-ab12cd --out /tmp/run-bundle && acia verify /tmp/run-bundle')
    .action(async (runId: string, options: { out?: string; repo: string; db?: string | boolean }) => {
      const path = await import('node:path');
      const { buildBundle } = await import('../../core/ledger/bundle.js');
      const { repoOf } = await import('../runs-action.js');
      const { shellLine } = await import('../shell-quote.js');
      const { dir, files } =
        options.db === undefined
          ? await buildBundle(await repoOf(options.repo, true), runId, options.out === undefined ? undefined : path.resolve(options.out))
          : await (await import('../fleet-read.js')).bundleFleet(options.db, runId, options);
      process.stdout.write(`bundle written: ${dir} (${files} files)\n  check it with: ${shellLine(['acia', 'verify', dir])}\n`);
    });
}
