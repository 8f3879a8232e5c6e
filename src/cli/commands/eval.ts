// `acia eval`: run the team on a SWE-bench-style task set and report resolve rate, cost and time per task.
import type { Command } from 'commander';

export interface EvalFlags {
  out: string;
  parallel?: string;
  model?: string;
  maxCostUsdPerTask?: string;
  sandbox?: string;
  db?: string | boolean;
  remotes?: string;
  runTimeout?: string;
  devAgent?: string;
  quiet?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('eval')
    .description('run the team on each instance of a SWE-bench-style task set, grade it, and report')
    .argument('<tasks>', 'a tasks .jsonl file, or a directory of them')
    .option('--out <dir>', 'where predictions.jsonl, report.json, report.md and the runs go; rerun with the same --out to resume', 'acia-eval')
    .option('--parallel <n>', 'instances run at once', '1')
    .option('--model <spec>', 'anthropic:<id>, openai:<id>, scripted:<file|dir> or chaos:<file|dir>[,seed=N,rate=R] (a dir holds <instance_id>.json)')
    .option('--max-cost-usd-per-task <usd>', 'each instance’s run stops before a model call would pass this cost')
    .option('--sandbox <mode>', 'auto | bwrap | off, for the agents’ commands, setup and grading')
    .option('--dev-agent <agent>', 'who does Dev tasks: acia (default), a name from devAgents in your config, acp:<command>, or several names (best-of-N)')
    .option('--db [url]', 'run the instances as fleet runs on this database (bare --db: $ACIA_DATABASE_URL); grading stays here')
    .option('--remotes <dir>', 'with --db: where each instance’s repository is put for the workers (list it in their fleetWorker.repos; default <out>/remotes)')
    .option('--run-timeout <minutes>', 'with --db: how long one instance’s fleet run may take, queue included (default: 30)')
    .option('--quiet', 'no progress line, only the final summary')
    .addHelpText(
      'after',
      '\nEach instance: a fresh checkout at base_commit, an ordinary run with the problem statement as the goal,\nthen grading outside the agents’ reach (test_patch applied, FAIL_TO_PASS and PASS_TO_PASS run).\nExit codes: 0 every instance finished (resolved or not), 1 some could not run, 2 usage, 130 interrupted.\n\nExamples:\n  acia eval workspace/eval --model scripted:workspace/eval/scripts --out /tmp/eval-a\n  acia eval tasks.jsonl --model anthropic:claude-sonnet-5-5 --parallel 2 --max-cost-usd-per-task 1\n  acia eval tasks.jsonl --dev-agent claude --out /tmp/eval-claude-code\n  acia eval tasks.jsonl --db --remotes /srv/git/eval --parallel 8 --out /tmp/eval-fleet\n  acia eval compare /tmp/eval-a /tmp/eval-b',
    )
    .action(async (tasks: string, flags: EvalFlags) => {
      const { evalCommand } = await import('../eval-action.js');
      process.exitCode = await evalCommand(tasks, flags);
    });
  cmd
    .command('compare')
    .description('print two eval results side by side')
    .argument('<a>', 'an eval --out directory')
    .argument('<b>', 'another one')
    .action(async (a: string, b: string) => {
      const { compareCommand } = await import('../eval-action.js');
      process.exitCode = compareCommand(a, b);
    });
}
