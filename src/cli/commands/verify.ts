// `acia verify [runId|bundleDir]`: checks ledgers (chain, hashes, seq, time, blobs, anchor) or a replay bundle.
import type { Command } from 'commander';

interface VerifyOptions {
  repo: string;
  json?: boolean;
  db?: string | boolean;
}

export function register(program: Command): void {
  program
    .command('verify')
    .description('verify the hash chain, blobs and anchor of every run (or one run, or a replay bundle directory)')
    .argument('[target]', 'a run id, or the path of a bundle directory')
    .option('--repo <dir>', 'the repository', '.')
    .option('--json', 'print the report as JSON')
    .option('--db [url]', 'check fleet runs in this PostgreSQL database (bare --db: $ACIA_DATABASE_URL); without a run id, every run it holds')
    .addHelpText('after', '\nExit codes: 0 intact, 1 tampered or damaged (first bad seq printed), 2 usage.\n\nExamples:\n  acia verify\n  acia verify 20261123-070102-ab12cd\n  acia verify .acia/bundles/20261123-070102-ab12cd\n  acia verify 20261123-070102-ab12cd --db postgres://fleet@db/acia')
    .action(async (target: string | undefined, options: VerifyOptions) => {
      const { verifyCommand } = await import('./verify-action.js');
      process.exitCode = await verifyCommand(target, options);
    });
}
