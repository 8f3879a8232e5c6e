// `acia config`: the effective configuration and where each value came from.
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('config')
    .description('print the effective configuration and the source of each value')
    .option('--repo <dir>', 'repository whose .acia/config.json to read', '.')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nLayers, later wins: defaults, $XDG_CONFIG_HOME/acia/config.json, <repo>/.acia/config.json,\nACIA_* environment variables, flags.\n\nExample:\n  acia config --repo ~/src/app')
    .action(async (opts: { repo: string; json?: boolean }) => {
      const { loadConfig } = await import('../../core/config/load.js');
      const { repoOf } = await import('../runs-action.js');
      const loaded = loadConfig({ repo: await repoOf(opts.repo, true), env: process.env, flags: {} });
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ config: loaded.config, sources: loaded.sources, files: loaded.files }, null, 2)}\n`);
        return;
      }
      const width = Math.max(...Object.keys(loaded.config).map((k) => k.length));
      for (const [k, v] of Object.entries(loaded.config)) {
        process.stdout.write(`${k.padEnd(width)}  ${JSON.stringify(v)}  (${loaded.sources[k] ?? 'default'})\n`);
      }
    });
}
