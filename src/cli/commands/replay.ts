// `acia replay <runId>`: re-run the executor on recorded responses and report any divergence.
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('replay')
    .description('re-run a run against its recorded model responses and tool results (no model, no side effects) and compare')
    .argument('<runId>', 'the run to replay, or a bundle directory (from `acia bundle`; needs no repository)')
    .option('--repo <dir>', 'the repository', '.')
    .option('--json', 'print the report as JSON')
    .addHelpText('after', '\nExit codes: 0 identical, 1 diverged, 2 usage.\n\nExample:\n  acia replay 20261123-070102-ab12cd\n  acia replay .acia/bundles/20261123-070102-ab12cd')
    .action(async (runId: string, opts: { repo: string; json?: boolean }) => {
      const { replayCommand } = await import('../replay-action.js');
      process.exitCode = await replayCommand(opts.repo, runId, opts.json ?? false);
    });
}
