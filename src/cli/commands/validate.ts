// `acia validate <file...>`: checks plans, plan sets, context packets and ledgers and prints each problem's JSON path.
import type { Command } from 'commander';

interface ValidateOptions {
  json?: boolean;
  kind?: string;
  context?: string;
  capabilities?: string;
}

export function register(program: Command): void {
  program
    .command('validate')
    .description('validate plans, plan sets, context packets and ledger files (kind detected from the content)')
    .argument('<file...>', 'files to validate')
    .option('--kind <kind>', 'treat every file as this kind: plan, plan-set, context-packet, ledger, acm-ledger (the ACM spec Memory Ledger), task, goal, config, ...')
    .option('--context <packet>', "a Context Packet (JSON or YAML): plans' guards, expressions and idemKeys may read only its facts")
    .option('--capabilities <map>', 'check plans and tasks against this Capability Map (ACIA or ACM v0.5 form) instead of ACIA\'s own')
    .option('--json', 'print a machine-readable result')
    .addHelpText('after', '\nExit codes: 0 all valid, 1 any invalid, 2 usage error (missing file, unreadable, not JSON).\n\nExamples:\n  acia validate plan.json\n  acia validate plan.json --context packet.json\n  acia validate --kind ledger .acia/runs/<runId>/ledger.jsonl --json')
    .action(async (files: string[], options: ValidateOptions) => {
      const { runValidate } = await import('./validate-run.js');
      process.exitCode = await runValidate(files, options);
    });
}
