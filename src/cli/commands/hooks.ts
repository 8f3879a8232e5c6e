// `acia hooks list`: the hooks a run here would use, where each is configured, and what its denial does;
// `acia hooks test <event> --input file.json`: runs the hooks for one event on a document, as a run would.
import type { Command } from 'commander';

export interface HooksListFlags {
  repo: string;
  json?: boolean;
}
export interface HooksTestFlags {
  repo: string;
  input: string;
  hook?: string;
  json?: boolean;
}

export function register(program: Command): void {
  const hooks = program.command('hooks').description("user hooks: commands run at points of the team's lifecycle (gates, guards, notifications)");
  hooks
    .command('list', { isDefault: true })
    .description('list the configured hooks: point, matchers, command, sandbox, and the file each comes from')
    .option('--repo <dir>', "the repository whose .acia/config.json to read", '.')
    .option('--json', 'print JSON')
    .action(async (flags: HooksListFlags) => {
      const { hooksListCommand } = await import('../hooks-action.js');
      process.exitCode = await hooksListCommand(flags);
    });
  hooks
    .command('test <event>')
    .description('run the hooks configured for <event> on a stdin document, sandboxed as in a run, and print their decisions')
    .requiredOption('--input <file>', 'the JSON document the hooks read (schemas/hook-input.schema.json; any part of one)')
    .option('--hook <name>', 'run only this hook (even if its matchers would not select the document)')
    .option('--repo <dir>', 'the repository the hooks run in (as a task worktree)', '.')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nEvents: plan.admit, task.created, task.pre, tool.pre, tool.post, task.post, task.merge, escalation, run.end\n(or a Claude Code event name: PreToolUse, PostToolUse, Stop, TaskCompleted, ...).\nExit code 0 when every hook allowed, 1 when one denied.\n\nExample:\n  echo \'{"tool":{"name":"run_command","use_id":"t1","input":{"command":"rm -rf /"}}}\' > call.json\n  acia hooks test tool.pre --input call.json',
    )
    .action(async (event: string, flags: HooksTestFlags) => {
      const { hooksTestCommand } = await import('../hooks-action.js');
      process.exitCode = await hooksTestCommand(event, flags);
    });
}
