// `acia tool <name>`: one tool call exactly as an agent makes it (repo as root, same sandbox, same env scrub).
import type { Command } from 'commander';
import { AciaError } from '../../core/errors.js';

interface ToolCommandOptions {
  repo: string;
  input: string;
  sandbox: string;
  timeout?: string;
  allowHost: string[];
}

export function register(program: Command): void {
  program
    .command('tool <name>')
    .description('run one agent tool against a repository and print the ToolResult as JSON (probes the sandbox)')
    .requiredOption('--repo <dir>', 'the repository (worktree root)')
    .option('--input <json>', 'the tool input as JSON', '{}')
    .option('--sandbox <mode>', 'auto | bwrap | off', 'auto')
    .option('--timeout <seconds>', 'command timeout in seconds', '300')
    .option('--allow-host <host>', 'let commands reach this host through the egress proxy (host, host:port or *.domain; repeatable)', (v: string, all: string[]) => [...all, v], [])
    .addHelpText('after', `\nTools: the Dev agent's tools (list_dir, read_file, write_file, run_tests, ...).\nCommands get no network unless --allow-host names a host (the same rule as allowedHosts in the config).\n\nExamples:\n  acia tool list_dir --repo . --input '{"path":"src"}'\n  acia tool run_tests --repo . --sandbox bwrap\n  acia tool run_command --repo . --allow-host registry.npmjs.org --input '{"command":"npm view zod version"}'`)
    .action(async (name: string, opts: ToolCommandOptions) => {
      const fs = await import('node:fs');
      const { devTools } = await import('../../core/tools/tool-sets.js');
      const { callTool } = await import('../../core/tools/define-tool.js');
      const { createRunner } = await import('../../core/sandbox/detect.js');
      const tool = devTools.find((t) => t.name === name);
      if (!tool) throw new AciaError('USAGE', `unknown tool ${name}; known: ${devTools.map((t) => t.name).join(', ')}`);
      let input: unknown;
      try {
        input = JSON.parse(opts.input);
      } catch (e) {
        throw new AciaError('USAGE', `--input is not valid JSON: ${(e as Error).message}`);
      }
      if (!['auto', 'bwrap', 'off'].includes(opts.sandbox)) throw new AciaError('USAGE', `--sandbox must be auto, bwrap or off`);
      let root: string;
      try {
        root = fs.realpathSync(opts.repo);
        if (!fs.statSync(root).isDirectory()) throw new Error('not a directory');
      } catch {
        throw new AciaError('USAGE', `--repo ${opts.repo} is not a directory`);
      }
      const timeoutS = Number(opts.timeout);
      if (!Number.isInteger(timeoutS) || timeoutS < 1) throw new AciaError('USAGE', '--timeout must be a positive integer');
      const mode = opts.sandbox as 'auto' | 'bwrap' | 'off';
      if (mode === 'off') process.stderr.write('acia: warning: --sandbox off: commands run unsandboxed on this machine\n');
      const runner = createRunner({ mode, root, allowedHosts: opts.allowHost });
      const result = await callTool(tool, input, { root, fs, runner, commandTimeoutS: timeoutS });
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    });
}
