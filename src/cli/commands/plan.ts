// `acia plan` (the PM only) and `acia exec <plan.json>` (run a saved plan without the PM).
import type { Command } from 'commander';
import { addRunOptions, type RunFlags } from './run.js';

export function register(program: Command): void {
  addRunOptions(
    program
      .command('plan')
      .description('let the PM plan a change and print Plan-A/Plan-B; nothing is executed')
      .argument('<task>', 'what to do, in plain words')
      .option('--out <file>', 'write the plan set as JSON (run it later with `acia exec`)')
      .option('--context <file>', 'plan from this Context Packet (JSON or YAML) instead of one built from the repository'),
  )
    .addHelpText('after', '\nExamples:\n  acia plan "add a --json flag to export" --out plan.json\n  acia exec plan.json')
    .action(async (task: string, flags: RunFlags & { out?: string; context?: string }) => {
      const { runCommand } = await import('../run-action.js');
      process.exitCode = await runCommand(
        { kind: 'plan', goal: task, ...(flags.out === undefined ? {} : { out: flags.out }), ...(flags.context === undefined ? {} : { context: flags.context }) },
        flags,
      );
    });

  addRunOptions(
    program
      .command('exec')
      .description('execute a saved, validated plan set (from `acia plan --out`) without asking the PM')
      .argument('<plan>', 'a plan set or plan JSON file')
      .option('--goal <text>', 'the goal to record (default: taken from the plan file name)')
      .option('--rebind-context', "execute the plan even though it was made against another Context Packet (recorded as GOAL_AMENDED)")
      .option('--apply', 'after success, merge the run branch into your current branch'),
  )
    .addHelpText('after', '\nExample:\n  acia exec plan.json --parallel 4')
    .action(async (file: string, flags: RunFlags & { goal?: string; rebindContext?: boolean }) => {
      const { runCommand } = await import('../run-action.js');
      process.exitCode = await runCommand({ kind: 'exec', file, ...(flags.goal === undefined ? {} : { goal: flags.goal }), rebindContext: flags.rebindContext ?? false }, flags);
    });
}
