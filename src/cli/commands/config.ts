// `acia config`: the effective configuration and where each value came from.
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('config')
    .description('print the effective configuration and the source of each value')
    .option('--repo <dir>', 'repository whose .acia/config.json to read', '.')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nLayers, later wins: defaults, $XDG_CONFIG_HOME/acia/config.json, <repo>/.acia/config.json,\nACIA_* environment variables, flags. The repository file sets the model, endpoints, sandbox,\nhosts, prices, budget or test command only once trusted (`acia trust`).\n\nExample:\n  acia config --repo ~/src/app')
    .action(async (opts: { repo: string; json?: boolean }) => {
      const { loadConfig } = await import('../../core/config/load.js');
      const fs = await import('node:fs');
      const { detectTestCommandWithSource } = await import('../../core/tools/run-tests.js');
      const { repoOf } = await import('../runs-action.js');
      // Any directory inside the repository, as with git; outside one, the directory as given.
      const repo = await repoOf(opts.repo, true);
      const loaded = loadConfig({ repo, env: process.env, flags: {} });
      if (loaded.ignored) {
        const { describeIgnored } = await import('../../core/config/load.js');
        process.stderr.write(`warning: ${describeIgnored(loaded.ignored)}\n`);
      }
      const { mcpServerLines } = await import('../mcp-action.js');
      const mcp = mcpServerLines(repo, loaded.config);
      // What QA will run and what runs before each agent: configured, or detected from the repository.
      const { findProjectVenv } = await import('../../core/sandbox/python-env.js');
      const { LOOKED_FOR } = await import('../../core/tools/test-command.js');
      const detected = loaded.config.testCommand === undefined ? detectTestCommandWithSource({ fs, root: repo }, { venv: findProjectVenv(repo, process.env) }) : null;
      const tests: { command: string | null; source: string; why?: string } =
        loaded.config.testCommand !== undefined
          ? { command: loaded.config.testCommand, source: `configured: testCommand, ${loaded.sources.testCommand ?? 'default'}` }
          : detected
            ? { command: detected.command, source: `detected from ${detected.source}`, ...(detected.why === undefined ? {} : { why: detected.why }) }
            : { command: null, source: `none configured or detected; looked for ${LOOKED_FOR}` };
      const setup = loaded.config.setup !== undefined ? { command: loaded.config.setup, source: `configured: setup, ${loaded.sources.setup ?? 'default'}` } : { command: null, source: 'none configured' };
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ config: loaded.config, sources: loaded.sources, files: loaded.files, ignored: loaded.ignored, testCommand: tests, setup, mcpServers: mcp.json }, null, 2)}\n`);
        return;
      }
      const width = Math.max(...Object.keys(loaded.config).map((k) => k.length), 'test command'.length);
      for (const [k, v] of Object.entries(loaded.config)) {
        if (k === 'mcpServers') continue;
        process.stdout.write(`${k.padEnd(width)}  ${JSON.stringify(v)}  (${loaded.sources[k] ?? 'default'})\n`);
      }
      for (const line of mcp.lines) process.stdout.write(`${line}\n`);
      process.stdout.write('\n');
      process.stdout.write(`${'test command'.padEnd(width)}  ${tests.command ?? '(none)'}  (${tests.source})\n`);
      if (tests.why !== undefined) process.stdout.write(`${''.padEnd(width)}  runs with ${tests.why}\n`);
      process.stdout.write(`${'setup'.padEnd(width)}  ${setup.command ?? '(none)'}  (${setup.source})\n`);
    });
}
