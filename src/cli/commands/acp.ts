// `acia acp`: serve the team to an editor over the Agent Client Protocol (JSON-RPC on stdio).
import type { Command } from 'commander';

export interface AcpFlags {
  model?: string;
  sandbox?: string;
}

export function register(program: Command): void {
  program
    .command('acp')
    .description('run as an ACP agent on stdio, so an editor (Zed, JetBrains, Neovim) can drive the team')
    .option('--model <spec>', 'anthropic:<id>, openai:<id> or scripted:<file> (default: your config)')
    .option('--sandbox <mode>', 'auto | bwrap | off')
    .addHelpText(
      'after',
      '\nstdout carries the protocol; diagnostics go to stderr. A session is a repository (the\nclient\'s cwd); a prompt is a goal for the team; an escalation arrives as a permission\nrequest, and guidance as your next prompt. session/load <runId> replays a run.\n\nZed (settings.json):\n  "agent_servers": { "ACIA": { "command": "npx", "args": ["acia", "acp"] } }',
    )
    .action(async (flags: AcpFlags) => {
      const { serveAcp } = await import('../acp-action.js');
      process.exitCode = await serveAcp(flags);
    });
}
