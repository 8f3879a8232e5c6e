// The fleet commands: `acia submit` a run to PostgreSQL, `acia worker` to take runs, `acia export`
// a fleet run to an ordinary run directory. `acia runs --db` lists fleet runs.
import type { Command } from 'commander';

export interface SubmitFlags {
  db?: string | boolean;
  repo: string;
  base?: string;
  model?: string;
  parallel?: string;
  maxIterations?: string;
  maxCostUsd?: string;
  maxTokens?: string;
  testCommand?: string;
  sandbox?: string;
  label?: string;
  approvePlan?: boolean;
  json?: boolean;
}

export interface WorkerFlags {
  db?: string | boolean;
  concurrency: string;
  taskConcurrency?: string;
  cache?: string;
  name?: string;
  dbPatience: string;
  metricsPort?: string;
  metricsHost: string;
  forgetWorkersAfter: string;
}

export function register(program: Command): void {
  program
    .command('submit')
    .description('queue a run for the fleet: a worker clones the repository at the base and runs the team')
    .argument('<task>', 'what to do, in plain words')
    .requiredOption('--repo <git-url>', 'the repository as a URL or path every worker can clone (and push to)')
    .option('--base <ref>', 'the commit or branch the run starts from', 'HEAD')
    .option('--db [url]', 'the fleet database (bare --db, or none: $ACIA_DATABASE_URL)')
    .option('--model <spec>', 'anthropic:<id>, openai:<id> or scripted:<file> (a path every worker can read)')
    .option('--parallel <n>', 'tasks run at once on the worker')
    .option('--max-iterations <n>', 'fix iterations before asking a human')
    .option('--max-cost-usd <usd>', 'the run’s budget')
    .option('--max-tokens <n>', 'the run’s token budget')
    .option('--test-command <cmd>', 'the command that runs the tests')
    .option('--sandbox <mode>', 'auto | bwrap | off (a worker refuses off unless its own config allows it)')
    .option('--label <text>', 'a note shown with the run (who or what it is for); the submitter itself is your database role')
    .option('--approve-plan', 'the run waits after planning until you answer: acia resume <run> --db --answer approve | switch <plan> | edit <json> | <feedback>')
    .option('--json', 'print the run id as JSON')
    .addHelpText('after', '\nExample:\n  acia submit "fix the flaky date test" --repo git@example.com:me/app.git --base main --db postgres://fleet@db/acia')
    .action(async (task: string, flags: SubmitFlags) => {
      const { submitCommand } = await import('../fleet-action.js');
      process.exitCode = await submitCommand(task, flags);
    });
  program
    .command('worker')
    .description('take runs from the fleet queue and run them (SIGTERM: finish the runs in hand, then stop)')
    .option('--db [url]', 'the fleet database (bare --db, or none: $ACIA_DATABASE_URL)')
    .option('--concurrency <n>', 'runs at once on this worker', '1')
    .option('--task-concurrency <n>', "other runs' dev tasks at once on this worker (default: --concurrency; 0: none)")
    .option('--cache <dir>', 'where runs are cloned on this machine (default: a directory under the system temp dir)')
    .option('--name <name>', 'how this worker shows in `acia runs --db` (default: host:pid)')
    .option('--db-patience <seconds>', 'how long to wait for the database to come back (a restart) before failing the runs in hand; pg-boss then retries them', '60')
    .option('--metrics-port <port>', 'serve Prometheus metrics at http://<metrics-host>:<port>/metrics (0: any free port, printed at start)')
    .option('--metrics-host <host>', 'the address the metrics listen on', '127.0.0.1')
    .option('--forget-workers-after <hours>', 'delete workers silent (gone or stopped) this long from the fleet’s list', '24')
    .addHelpText('after', '\nWorkers need Node, git, bubblewrap and the database URL.\n\nExample:\n  acia worker --db postgres://fleet@db/acia --concurrency 2 --metrics-port 9464')
    .action(async (flags: WorkerFlags) => {
      const { workerCommand } = await import('../fleet-action.js');
      process.exitCode = await workerCommand(flags);
    });
  program
    .command('fleet')
    .description('the fleet at a glance')
    .command('status')
    .description('the database (health, your role), runs by status, leases, task jobs (queued, active, retrying, failed, expired, stuck), workers (alive, stale, gone, stopped), budgets')
    .option('--db [url]', 'the fleet database (bare --db, or none: $ACIA_DATABASE_URL)')
    .option('--json', 'print JSON')
    .action(async (flags: { db?: string | boolean; json?: boolean }) => {
      const { fleetStatusCommand } = await import('../fleet-action.js');
      process.exitCode = await fleetStatusCommand(flags.db, flags.json ?? false);
    });
  program
    .command('export')
    .description('write a fleet run as .acia/runs/<runId> in a repository, to verify, show or replay it offline')
    .argument('<runId>', 'the fleet run')
    .option('--db [url]', 'the fleet database (bare --db, or none: $ACIA_DATABASE_URL)')
    .option('--repo <dir>', 'the repository to write it into', '.')
    .action(async (runId: string, flags: { db?: string | boolean; repo: string }) => {
      const { exportCommand } = await import('../fleet-action.js');
      process.exitCode = await exportCommand(runId, flags);
    });
}
