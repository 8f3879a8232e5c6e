// `acia mcp`: serve the team to MCP clients (stdio, or --http on 127.0.0.1); `acia mcp list`: the MCP
// servers agents get, where each is defined, whether it starts and its tools.
import type { Command } from 'commander';

export interface McpServeFlags {
  http?: string;
  repo: string;
}
export interface McpListFlags {
  repo: string;
  json?: boolean;
}

export function register(program: Command): void {
  const mcp = program.command('mcp').description('MCP both ways: serve the team to MCP clients, or list the MCP servers agents use');
  mcp
    .command('serve', { isDefault: true })
    .description('serve acia_run, acia_status, acia_answer, acia_say, acia_resume, acia_cancel, acia_runs, acia_show, acia_verify and run resources over MCP')
    .option('--http <port>', 'serve streamable HTTP on 127.0.0.1:<port> instead of stdio')
    .option('--repo <dir>', 'the repository tools act on when a call names none', '.')
    .addHelpText('after', '\nExamples:\n  claude mcp add acia -- npx acia mcp\n  acia mcp --http 8765')
    .action(async (flags: McpServeFlags) => {
      const { mcpServeCommand } = await import('../mcp-action.js');
      process.exitCode = await mcpServeCommand(flags);
    });
  mcp
    .command('run-job', { hidden: true })
    .description('internal: one run of acia mcp, its job (JSON) on stdin, its progress as JSON lines on stdout')
    .action(async () => {
      const { mcpRunJobCommand } = await import('../mcp-action.js');
      process.exitCode = await mcpRunJobCommand();
    });
  mcp
    .command('list')
    .description('start each configured MCP server once and show its source, whether it starts, and its tools')
    .option('--repo <dir>', 'the repository whose .mcp.json to read', '.')
    .option('--json', 'print JSON')
    .action(async (flags: McpListFlags) => {
      const { mcpListCommand } = await import('../mcp-action.js');
      process.exitCode = await mcpListCommand(flags);
    });
}
