// docs/scale-out.md's walkthrough ("From an empty machine"), followed step by step: its SQL run as the
// database's superuser on an empty cluster, its worker config written, its shell lines run by bash with
// `acia` the built CLI. The only changes are the ones the doc announces: the cluster's address for
// db.internal:5432, a temp dir for /srv/git, a free metrics port, and a scripted model for the submit.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { CLI } from './helpers.js';
import { cliEnv, editedScript, ROOT, type Turn } from './cli-helpers.js';
import { useFleet, type FleetHarness, fleetAvailable, runFlags, scenarioOf } from './fleet-harness.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';

let fleet: FleetHarness;

interface Block {
  lang?: string;
  text: string;
}

/** The walkthrough's code blocks, in order. */
function walkthrough(): Required<Block>[] {
  const md = readFileSync(join(ROOT, 'docs', 'scale-out.md'), 'utf8');
  const start = md.indexOf('## From an empty machine');
  expect(start).toBeGreaterThan(0);
  const section = md.slice(start, md.indexOf('\n## ', start + 1));
  return [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, text: m[2]! }));
}

const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
/** bash with `acia` the built CLI; `exec` so that a long-running line is the process a test kills. */
const bashArgs = (line: string) => ['-c', `acia() { exec ${quote(process.execPath)} ${quote(CLI)} "$@"; }\n${line}`];

describe.skipIf(!fleetAvailable())('docs/scale-out.md, from an empty machine', () => {
  useFleet((f) => (fleet = f));

  it('the role and database the doc creates, workers that create the schema, submit, watch, cancel, metrics', async () => {
    const blocks = walkthrough();
    expect(blocks.map((b) => b.lang)).toEqual(['sql', 'json', 'sh', 'sh', 'sh', 'sh', 'sh', 'yaml']);
    const [sql, config, workerSh, submitSh, watchSh, cancelSh, metricsSh] = blocks as [Block, Block, Block, Block, Block, Block, Block, Block];
    const cluster = new URL(fleet.url);
    const remote = fleet.remote('walkthrough');
    const env: Record<string, string> = cliEnv({ XDG_CONFIG_HOME: fleet.workerConfigHome });
    let metricsAt = '';
    const edit = (line: string, run = '') =>
      line
        .replaceAll('db.internal:5432', cluster.host)
        .replaceAll('/srv/git/app.git', remote)
        .replaceAll('/srv/git', fleet.remotesDir)
        .replaceAll('--metrics-port 9464', '--metrics-port 0')
        .replaceAll('w1.internal:9464', metricsAt)
        .replaceAll('<run>', run);
    const exportsOf = (block: string) => {
      for (const l of lines(block).filter((x) => x.startsWith('export '))) {
        const m = /^export (\w+)=(\S+)$/.exec(edit(l));
        expect(m, l).not.toBeNull();
        env[m![1]!] = m![2]!;
      }
    };
    const commandsOf = (block: string) => lines(block).filter((x) => !x.startsWith('export '));
    const sh = (line: string, run = '') => {
      const r = spawnSync('bash', bashArgs(edit(line, run)), { env, encoding: 'utf8', timeout: 120_000 });
      return { code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
    };
    const background = (line: string, run = '') => {
      const child = spawn('bash', bashArgs(edit(line, run)), { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const done = new Promise<number>((r) => child.on('close', (code) => r(code ?? 1)));
      return { child, done, out: () => out };
    };

    // 1. The administrator's SQL, statement by statement (CREATE DATABASE refuses a transaction block).
    for (const statement of sql.text.split(';').map((s) => s.trim()).filter(Boolean)) await fleet.db.query(statement);
    const fleetDb = new pg.Pool({ connectionString: `postgres://acia@${cluster.host}/fleet` });
    try {
      expect((await fleetDb.query("SELECT count(*)::int AS n FROM pg_tables WHERE tablename LIKE 'acia\\_%'")).rows[0]).toEqual({ n: 0 });

      // 2. The worker's config; this machine's scripts may be used, and --sandbox off only where no sandbox exists.
      const policy = JSON.parse(edit(config.text)) as { fleetWorker: Record<string, unknown> };
      expect(policy.fleetWorker.repos).toEqual([fleet.remotesDir]);
      Object.assign(policy.fleetWorker, { scriptedModelDirs: [tmpdir()], allowSandboxOff: !sandboxAvailable() });
      writeFileSync(join(fleet.workerConfigHome, 'acia', 'config.json'), JSON.stringify(policy));

      // 3. A worker, as the owner: it creates the schema, pg-boss's included, owned by acia_owner.
      exportsOf(workerSh.text);
      const [workerLine] = commandsOf(workerSh.text) as [string];
      const worker = background(workerLine);
      fleet.workers.set('w1', worker.child);
      await fleet.until('the worker to serve its metrics', () => /metrics at http:\/\/\S+:(\d+)\/metrics/.test(worker.out()), 60_000);
      metricsAt = `127.0.0.1:${/metrics at http:\/\/\S+:(\d+)\/metrics/.exec(worker.out())![1]!}`;
      const owners = await fleetDb.query<{ tablename: string; tableowner: string }>("SELECT tablename, tableowner FROM pg_tables WHERE tablename IN ('acia_runs', 'acia_ledger', 'acia_task_jobs') OR schemaname = 'pgboss' AND tablename = 'job'");
      expect(owners.rows.map((r) => r.tableowner)).toEqual(['acia_owner', 'acia_owner', 'acia_owner', 'acia_owner']);

      // 4. Submit as alice (twice: one run to watch to its end, one to cancel while its Dev agent works).
      exportsOf(submitSh.text);
      const [submitLine] = commandsOf(submitSh.text) as [string];
      const submit = (edits: (turns: Turn[]) => void) => {
        const flags = runFlags(scenarioOf('happy'), editedScript('happy', edits)).map(quote).join(' ');
        const r = sh(`${submitLine} ${flags}`);
        expect(r.code, r.stderr).toBe(0);
        return /^queued (\S+)/.exec(r.stdout)![1]!;
      };
      const zero = (turns: Turn[]) => {
        for (const t of turns) t.latencyMs = 0;
      };
      const watched = submit(zero);

      // 5. Watch: alice sees her run and a submitter's view of the fleet; the log follows it to its end.
      const [runsLine, statusLine, logsLine] = commandsOf(watchSh.text) as [string, string, string];
      const follow = background(logsLine, watched);
      expect(await follow.done, follow.out()).toBe(0);
      expect(follow.out().trimEnd().split('\n').at(-1)).toMatch(/team\s+run succeeded/);
      const runs = sh(runsLine);
      expect(runs.stdout).toMatch(new RegExp(`${watched}.*succeeded`));
      expect(runs.stdout).toContain('walkthrough');
      expect(sh(statusLine).stdout).toMatch(/you are alice \(a submitter: your own runs only\)[\s\S]*w1\s+alive/);

      // 6. Cancel a run whose Dev agent waits on a ten-minute reply; its ledger ends cancelled and verifies.
      const stopped = submit((turns) => {
        zero(turns);
        turns.find((t) => t.caller === 'dev:t1')!.latencyMs = 600_000;
      });
      await fleet.until('t1 to start', async () => (await fleetDb.query("SELECT 1 FROM acia_ledger WHERE run_id = $1 AND line LIKE '%\"TASK_STARTED\"%'", [stopped])).rowCount !== 0, 60_000);
      const [cancelLine, verifyLine] = commandsOf(cancelSh.text) as [string, string];
      const cancel = sh(cancelLine, stopped);
      expect(cancel.code, cancel.stdout + cancel.stderr + worker.out()).toBe(0);
      expect(cancel.stdout).toContain(`cancelled ${stopped}`);
      expect(sh(verifyLine, stopped).code).toBe(0);

      // 7. The worker's metrics, by the doc's curl: one run succeeded, one cancelled.
      const [curlLine] = commandsOf(metricsSh.text) as [string];
      const metrics = sh(curlLine).stdout;
      expect(metrics).toMatch(/^acia_worker_runs_total\{outcome="succeeded",worker="w1"\} 1$/m);
      expect(metrics).toMatch(/^acia_worker_runs_total\{outcome="cancelled",worker="w1"\} 1$/m);
      expect(metrics).toMatch(/^acia_fleet_runs\{status="cancelled",worker="w1"\} 1$/m);
    } finally {
      await fleetDb.end();
    }
  }, 240_000);
});
