// Operating a fleet: `acia fleet status` shows who holds which run since when, and `acia worker` stops
// gracefully on SIGTERM: it finishes the run in hand, takes no new one, and leaves marked as stopped.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { acia, CLI, git, tempDir } from './helpers.js';
import { cliEnv, sampleRepo, SCENARIOS, zeroLatencyScript } from './cli-helpers.js';
import { postgresBin, startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';

const sandbox = sandboxAvailable() ? 'auto' : 'off';
let server: TestPostgres;
const children: ReturnType<typeof spawn>[] = [];

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  server?.stop();
});

interface FleetStatus {
  workers: { name: string; state: string; alive: boolean; running: number }[];
  queued: number;
  leases: { runId: string; worker: string; since: string | null; heldSeconds: number | null }[];
}
const fleetStatus = (): FleetStatus => {
  const r = acia(['fleet', 'status', '--db', server.url, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as FleetStatus;
};

if (postgresBin() === null && process.env.ACIA_TEST_REQUIRE_POSTGRES === '1') throw new Error('ACIA_TEST_REQUIRE_POSTGRES=1 but no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)');

describe.skipIf(postgresBin() === null)('fleet operations', () => {
  it('fleet status shows the lease; SIGTERM finishes the run in hand, takes no new one, and the worker shows as stopped', async () => {
    const repo = sampleRepo('ops');
    const remote = join(tempDir('ops-remote'), 'app.git');
    git(repo, 'clone', '-q', '--bare', repo, remote);
    const dir = tempDir('ops-script');
    const script = JSON.parse(readFileSync(zeroLatencyScript('happy', dir), 'utf8')) as { turns: { caller: string; latencyMs?: number }[] };
    script.turns.find((t) => t.caller === 'dev:t1')!.latencyMs = 6000;
    const slow = join(dir, 'slow.json');
    writeFileSync(slow, JSON.stringify(script));
    const s = JSON.parse(readFileSync(join(SCENARIOS, 'happy', 'scenario.json'), 'utf8')) as { goal: string; settings: { testCommand: string } };
    const submit = () => {
      const r = acia(['submit', s.goal, '--repo', remote, '--base', 'main', '--db', server.url, '--json', '--model', `scripted:${slow}`, '--test-command', s.settings.testCommand, '--sandbox', sandbox]);
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(r.stdout) as { runId: string }).runId;
    };
    const first = submit();
    const worker = spawn(process.execPath, [CLI, 'worker', '--db', server.url, '--concurrency', '1', '--name', 'ops-1', '--cache', tempDir('ops-cache')], { env: cliEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
    children.push(worker);
    let log = '';
    worker.stderr?.on('data', (d: Buffer) => (log += d.toString()));
    const exited = new Promise<number | null>((resolve) => worker.on('exit', (code) => resolve(code)));

    const db = new pg.Pool({ connectionString: server.url });
    try {
      const started = async () => (await db.query("SELECT 1 FROM acia_ledger WHERE run_id = $1 AND line LIKE '%\"TASK_STARTED\"%'", [first])).rowCount !== 0;
      for (let i = 0; i < 120 && !(await started()); i++) await new Promise((r) => setTimeout(r, 250));
      expect(await started(), log).toBe(true);

      const during = fleetStatus();
      expect(during.workers).toEqual([expect.objectContaining({ name: 'ops-1', state: 'alive', running: 1 })]);
      expect(during.leases).toEqual([expect.objectContaining({ runId: first, worker: 'ops-1' })]);
      expect(Date.now() - Date.parse(during.leases[0]!.since!)).toBeLessThan(60_000);
      const text = acia(['fleet', 'status', '--db', server.url]);
      expect(text.stdout).toMatch(new RegExp(`${first}\\s+held by ops-1 since \\S+`));
      expect(text.stdout).toMatch(/ops-1\s+alive\s+1\/1 running/);

      // Mid-task: SIGTERM. A second run queued now must not be taken by the stopping worker.
      worker.kill('SIGTERM');
      const second = submit();
      expect(await exited, log).toBe(0);
      const rows = new Map((await db.query<{ run_id: string; status: string; worker: string | null }>('SELECT run_id, status, worker FROM acia_runs')).rows.map((r) => [r.run_id, r]));
      expect(rows.get(first), log).toMatchObject({ status: 'succeeded', worker: 'ops-1' });
      expect(rows.get(second)?.status).toBe('queued');
      const after = fleetStatus();
      expect(after.workers).toEqual([expect.objectContaining({ name: 'ops-1', state: 'stopped', alive: false, running: 0 })]);
      expect(after.leases).toEqual([]);
      expect(after.queued).toBe(1);
      expect(log).toContain('stopping after the runs in hand');
      // A worker that stopped beating without saying goodbye (killed, cut off) shows as stale.
      await db.query("INSERT INTO acia_workers (name, concurrency, seen_at) VALUES ('vanished', 2, now() - interval '1 minute')");
      expect(fleetStatus().workers.find((w) => w.name === 'vanished')).toMatchObject({ state: 'stale', alive: false });
      expect(acia(['fleet', 'status', '--db', server.url]).stdout).toMatch(/vanished\s+stale\s+0\/2 running, last seen 6\d+s ago/);
      await db.query("DELETE FROM acia_workers WHERE name = 'vanished'");
    } finally {
      await db.end();
    }
  }, 180_000);

  it('a job re-delivered for a run another live worker holds (its job expired under a long run) is dropped, not run twice', async () => {
    const db = new pg.Pool({ connectionString: server.url });
    const beat = setInterval(() => void db.query("UPDATE acia_workers SET seen_at = now() WHERE name = 'busy-elsewhere'").catch(() => undefined), 1000);
    try {
      await db.query("INSERT INTO acia_workers (name, concurrency) VALUES ('busy-elsewhere', 1)");
      const repo = sampleRepo('ops-dup');
      const remote = join(tempDir('ops-dup-remote'), 'app.git');
      git(repo, 'clone', '-q', '--bare', repo, remote);
      const sub = acia(['submit', 'anything', '--repo', remote, '--db', server.url, '--json', '--model', `scripted:${zeroLatencyScript('happy', tempDir('ops-dup-script'))}`]);
      expect(sub.code, sub.stderr).toBe(0);
      const runId = (JSON.parse(sub.stdout) as { runId: string }).runId;
      // As if the live worker 'busy-elsewhere' had taken this run and pg-boss handed its job out again.
      await db.query("UPDATE acia_runs SET status = 'running', worker = 'busy-elsewhere' WHERE run_id = $1", [runId]);
      const worker = spawn(process.execPath, [CLI, 'worker', '--db', server.url, '--name', 'ops-2', '--cache', tempDir('ops-dup-cache')], { env: cliEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
      children.push(worker);
      let log = '';
      worker.stderr?.on('data', (d: Buffer) => (log += d.toString()));
      for (let i = 0; i < 80 && !log.includes(`${runId}: ended, or held by a live worker`); i++) await new Promise((r) => setTimeout(r, 250));
      expect(log).toContain(`${runId}: ended, or held by a live worker; this stale job is dropped`);
      expect((await db.query('SELECT 1 FROM acia_ledger WHERE run_id = $1', [runId])).rowCount).toBe(0);
      expect((await db.query('SELECT status, worker FROM acia_runs WHERE run_id = $1', [runId])).rows[0]).toEqual({ status: 'running', worker: 'busy-elsewhere' });
      worker.kill('SIGTERM');
    } finally {
      clearInterval(beat);
      await db.end();
    }
  }, 60_000);

  it('a run marked as held by a live worker that does not hold it (its failure lost in an outage) is queued again and finishes', async () => {
    const db = new pg.Pool({ connectionString: server.url });
    try {
      const repo = sampleRepo('ops-orphan');
      const remote = join(tempDir('ops-orphan-remote'), 'app.git');
      git(repo, 'clone', '-q', '--bare', repo, remote);
      const s = JSON.parse(readFileSync(join(SCENARIOS, 'happy', 'scenario.json'), 'utf8')) as { goal: string; settings: { testCommand: string } };
      const sub = acia(['submit', s.goal, '--repo', remote, '--base', 'main', '--db', server.url, '--json', '--model', `scripted:${zeroLatencyScript('happy', tempDir('ops-orphan-script'))}`, '--test-command', s.settings.testCommand, '--sandbox', sandbox]);
      expect(sub.code, sub.stderr).toBe(0);
      const runId = (JSON.parse(sub.stdout) as { runId: string }).runId;
      // As a long outage leaves it: the row says ops-3 runs it, and its job is stuck active with nobody on it.
      await db.query("UPDATE acia_runs SET status = 'running', worker = 'ops-3' WHERE run_id = $1", [runId]);
      await db.query("UPDATE pgboss.job SET state = 'active', started_on = now() WHERE data->>'runId' = $1", [runId]);
      const worker = spawn(process.execPath, [CLI, 'worker', '--db', server.url, '--name', 'ops-3', '--cache', tempDir('ops-orphan-cache')], { env: cliEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
      children.push(worker);
      let log = '';
      worker.stderr?.on('data', (d: Buffer) => (log += d.toString()));
      let row: { status: string; worker: string | null } | undefined;
      for (let i = 0; i < 120; i++) {
        row = (await db.query<{ status: string; worker: string | null }>('SELECT status, worker FROM acia_runs WHERE run_id = $1', [runId])).rows[0];
        if (row?.status === 'succeeded') break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(row, log).toEqual({ status: 'succeeded', worker: 'ops-3' });
      expect(log).toContain(`${runId} was marked as held here but is not; queued again`);
      worker.kill('SIGTERM');
    } finally {
      await db.end();
    }
  }, 60_000);
});
