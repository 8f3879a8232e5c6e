// `acia replay <runId>`: re-run the executor on recorded responses and report any divergence.
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('replay')
    .description('re-run a run against its recorded model responses and tool results (no model, no side effects) and compare')
    .argument('<runId>', 'the run to replay, or a bundle directory (from `acia bundle`; needs no repository)')
    .option('--repo <dir>', 'the repository', '.')
    .option('--json', 'print the report as JSON')
    .option('--db [url]', 'a fleet run: read it from this PostgreSQL database (bare --db: $ACIA_DATABASE_URL)')
    .addHelpText('after', '\nExit codes: 0 identical, 1 diverged, 2 usage.\n\nExample:\n  acia replay 20261123-070102-ab12cd\n  acia replay .acia/bundles/20261123-070102-ab12cd')
    .action(async (runId: string, opts: { repo: string; json?: boolean; db?: string | boolean }) => {
      if (opts.db !== undefined) {
        const { replayFleet } = await import('../fleet-read.js');
        process.exitCode = await replayFleet(opts.db, runId, opts.json ?? false);
        return;
      }
      const { replayCommand } = await import('../replay-action.js');
      process.exitCode = await replayCommand(opts.repo, runId, opts.json ?? false);
    });
}
