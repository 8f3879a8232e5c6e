// `acia demo`: a whole run, offline, on a sample repo, through the fake Anthropic server and the real SDK.
import type { Command } from 'commander';

export interface DemoFlags {
  scenario: string;
  dir?: string;
  parallel?: string;
  json?: boolean;
  quiet?: boolean;
  debug?: boolean;
  list?: boolean;
}

export function register(program: Command): void {
  program
    .command('demo')
    .description('run the whole team offline on a sample repo (no API key): fake Anthropic server, real SDK')
    .option('--scenario <name>', 'happy | fix-loop | escalate | parallel | plan-b | budget', 'happy')
    .option('--dir <path>', 'where to create the sample repo (default: a new temp dir, printed)')
    .option('--parallel <n>', 'override the scenario’s parallelism')
    .option('--list', 'list the scenarios and exit')
    .option('--json', 'NDJSON events on stdout')
    .option('--quiet', 'print only the final summary')
    .addHelpText('after', '\nExamples:\n  acia demo\n  acia demo --scenario fix-loop --dir /tmp/acia-fix\n  acia demo --scenario parallel --parallel 1')
    .action(async (flags: DemoFlags) => {
      const { demoCommand } = await import('../demo-action.js');
      process.exitCode = await demoCommand(flags);
    });
}
