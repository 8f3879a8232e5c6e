// The fleet on a real PostgreSQL: a forked chain is impossible, an unreachable database is one line,
// and kill -9 of the worker running a run hands it to another. (Many runs over several workers, the
// answer to an escalation and the reading commands: fleet-scale.test.ts; faults: fleet-faults.test.ts.)
import { spawn, type ChildProcess } from 'node:child_process';
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
const workers: ChildProcess[] = [];
let workerLog = '';

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => {
  for (const w of workers) w.kill('SIGKILL');
  server?.stop();
});

interface Scenario {
  name: string;
  goal: string;
  settings: { testCommand: string; parallel: number; maxIterations: number; maxTokens?: number };
  expect: { reason: string };
}

function startWorker(name: string): ChildProcess {
  const w = spawn(process.execPath, [CLI, 'worker', '--db', server.url, '--concurrency', '2', '--name', name, '--cache', tempDir(`cache-${name}`)], { env: cliEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  w.stderr?.on('data', (d: Buffer) => (workerLog += d.toString()));
  workers.push(w);
  return w;
}

async function waitForRuns(ids: string[], timeoutMs: number): Promise<Map<string, { status: string; worker: string | null }>> {
  const db = new pg.Pool({ connectionString: server.url });
  try {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const rows = (await db.query<{ run_id: string; status: string; worker: string | null }>('SELECT run_id, status, worker FROM acia_runs')).rows;
      const done = rows.filter((r) => ids.includes(r.run_id) && !['queued', 'running'].includes(r.status));
      if (done.length === ids.length || Date.now() > end) return new Map(rows.map((r) => [r.run_id, r]));
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    await db.end();
  }
}

// CI installs PostgreSQL (.ci/run sets ACIA_TEST_REQUIRE_POSTGRES=1): there a missing server is a failure.
if (postgresBin() === null && process.env.ACIA_TEST_REQUIRE_POSTGRES === '1') throw new Error('ACIA_TEST_REQUIRE_POSTGRES=1 but no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)');

describe.skipIf(postgresBin() === null)('the fleet on PostgreSQL', () => {
  it('refuses a second writer of the same seq: a forked chain is impossible', async () => {
    const { openPgLedger, migrateLedger } = await import('../../src/core/ledger/pg-ledger.js');
    const db = new pg.Pool({ connectionString: server.url });
    try {
      await migrateLedger(db);
      const clock = { now: () => new Date() };
      const a = await openPgLedger(db, '20261123-000000-aaaaaa', { clock, create: true, dir: tempDir('pg-a') });
      await a.append({ actor: 'team', type: 'RUN_RESUMED', data: { pid: 1 } });
      // A second writer opened at the same head: a worker that took over the run.
      const b = await openPgLedger(db, '20261123-000000-aaaaaa', { clock, create: false, dir: tempDir('pg-b') });
      await b.append({ actor: 'team', type: 'RUN_RESUMED', data: { pid: 2 } });
      await expect(a.append({ actor: 'team', type: 'RUN_RESUMED', data: { pid: 1 } })).rejects.toThrow(/written by another worker/);
      await expect(a.append({ actor: 'team', type: 'RUN_RESUMED', data: { pid: 1 } })).rejects.toThrow(/written by another worker/);
      const rows = await db.query<{ seq: number }>('SELECT seq FROM acia_ledger WHERE run_id = $1 ORDER BY seq', ['20261123-000000-aaaaaa']);
      expect(rows.rows.map((r) => r.seq)).toEqual([0, 1]);
    } finally {
      await db.end();
    }
  }, 60_000);

  it('a fleet command with no database says so in one line', () => {
    const r = acia(['runs', '--db', 'postgres://nobody@127.0.0.1:1/none']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^acia: cannot reach the fleet database/);
  });

  it('kill -9 of the worker running a run: another worker resumes it from the database and the pushed branches', async () => {
    for (const w of workers.splice(0)) w.kill('SIGKILL');
    const repo = sampleRepo('fleet-kill');
    const remote = join(tempDir('fleet-kill-remote'), 'app.git');
    git(repo, 'clone', '-q', '--bare', repo, remote);
    const dir = tempDir('fleet-kill-script');
    const script = JSON.parse(readFileSync(zeroLatencyScript('happy', dir), 'utf8')) as { turns: { caller: string; latencyMs?: number }[] };
    // The Dev agent's first reply is slow, so the kill lands while its task runs.
    script.turns.find((t) => t.caller === 'dev:t1')!.latencyMs = 6000;
    const file = join(dir, 'slow.json');
    writeFileSync(file, JSON.stringify(script));
    const s = JSON.parse(readFileSync(join(SCENARIOS, 'happy', 'scenario.json'), 'utf8')) as Scenario;
    const sub = acia(['submit', s.goal, '--repo', remote, '--base', 'main', '--db', server.url, '--json', '--model', `scripted:${file}`, '--test-command', s.settings.testCommand, '--sandbox', sandbox]);
    expect(sub.code, sub.stderr).toBe(0);
    const runId = (JSON.parse(sub.stdout) as { runId: string }).runId;

    const doomed = startWorker('doomed');
    const db = new pg.Pool({ connectionString: server.url });
    try {
      const started = async () => (await db.query("SELECT 1 FROM acia_ledger WHERE run_id = $1 AND line LIKE '%\"TASK_STARTED\"%'", [runId])).rowCount !== 0;
      for (let i = 0; i < 120 && !(await started()); i++) await new Promise((r) => setTimeout(r, 250));
      expect(await started()).toBe(true);
      doomed.kill('SIGKILL');
      startWorker('rescuer');
      const rows = await waitForRuns([runId], 120_000);
      expect(rows.get(runId)?.status, workerLog).toBe('succeeded');
      expect(rows.get(runId)?.worker).toBe('rescuer');
    } finally {
      await db.end();
    }
    const out = sampleRepo('fleet-kill-export');
    expect(acia(['export', runId, '--db', server.url, '--repo', out]).code).toBe(0);
    expect(acia(['verify', runId, '--repo', out]).code).toBe(0);
    const entries = readFileSync(join(out, '.acia', 'runs', runId, 'ledger.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type: string; data: { taskId?: string } });
    expect(entries.some((e) => e.type === 'RUN_RESUMED')).toBe(true);
    expect(entries.filter((e) => e.type === 'TASK_COMPLETED' && e.data.taskId === 't1')).toHaveLength(1);
    expect(git(remote, 'show', `acia/${runId}:src/title-case.js`)).toContain('titleCase');
  }, 240_000);
});
