// Faults in the fleet, with real components: PostgreSQL stopped for 10 s mid-run and started again,
// and a git remote whose pre-receive hook rejects pushes (for a while, then always). Nothing may be
// lost or done twice: every run finishes (or stops with a clear reason in `acia runs --db`), every
// ledger verifies, no task completes twice. (kill -9 of a worker mid-task: tests/e2e/fleet.test.ts.)
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { acia, CLI, git, tempDir } from './helpers.js';
import { cliEnv, sampleRepo, SCENARIOS, zeroLatencyScript } from './cli-helpers.js';
import { postgresBin, startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';

const sandbox = sandboxAvailable() ? 'auto' : 'off';
let server: TestPostgres;
let workers: ChildProcess[] = [];
let workerLog = '';

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterEach(() => {
  for (const w of workers) w.kill('SIGKILL');
  workers = [];
});
afterAll(() => server?.stop());

interface Scenario {
  goal: string;
  settings: { testCommand: string; parallel: number; maxIterations: number };
  expect: { reason: string };
}

function startWorker(name: string, extra: string[] = []): ChildProcess {
  const w = spawn(process.execPath, [CLI, 'worker', '--db', server.url, '--concurrency', '2', '--name', name, '--cache', tempDir(`faults-cache-${name}`), ...extra], { env: cliEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  w.stderr?.on('data', (d: Buffer) => (workerLog += d.toString()));
  workers.push(w);
  return w;
}

/** A scenario's script with the Dev agent's first reply slowed down, so a fault lands mid-task. */
function slowScript(name: string, devLatencyMs: number): string {
  const dir = tempDir(`faults-script-${name}`);
  const script = JSON.parse(readFileSync(zeroLatencyScript(name, dir), 'utf8')) as { turns: { caller: string; latencyMs?: number }[] };
  const dev = script.turns.find((t) => t.caller.startsWith('dev:'));
  if (dev) dev.latencyMs = devLatencyMs;
  const file = join(dir, 'slow.json');
  writeFileSync(file, JSON.stringify(script));
  return file;
}

function submit(name: string, remote: string, devLatencyMs: number): string {
  const s = JSON.parse(readFileSync(join(SCENARIOS, name, 'scenario.json'), 'utf8')) as Scenario;
  const r = acia(['submit', s.goal, '--repo', remote, '--base', 'main', '--db', server.url, '--json', '--model', `scripted:${slowScript(name, devLatencyMs)}`, '--test-command', s.settings.testCommand, '--parallel', String(s.settings.parallel), '--max-iterations', String(s.settings.maxIterations), '--sandbox', sandbox]);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { runId: string }).runId;
}

function bareRemote(prefix: string): string {
  const repo = sampleRepo(prefix);
  const remote = join(tempDir(`${prefix}-remote`), 'app.git');
  git(repo, 'clone', '-q', '--bare', repo, remote);
  return remote;
}

/** Polls with a fresh connection each time (the server may be away); returns the runs' rows. */
async function waitForRuns(ids: string[], done: (status: string) => boolean, timeoutMs: number): Promise<Map<string, { status: string; message: string | null; worker: string | null }>> {
  const end = Date.now() + timeoutMs;
  let rows = new Map<string, { status: string; message: string | null; worker: string | null }>();
  for (;;) {
    const db = new pg.Client({ connectionString: server.url });
    try {
      await db.connect();
      const r = await db.query<{ run_id: string; status: string; message: string | null; worker: string | null }>('SELECT run_id, status, message, worker FROM acia_runs WHERE run_id = ANY($1)', [ids]);
      rows = new Map(r.rows.map((x) => [x.run_id, x]));
    } catch {
      // the server is down for the test's outage
    } finally {
      await db.end().catch(() => undefined);
    }
    if ((rows.size === ids.length && [...rows.values()].every((r) => done(r.status))) || Date.now() > end) return rows;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Nothing lost, nothing done twice: the chain verifies from the database and no task completed twice. */
async function checkLedgers(ids: string[]): Promise<void> {
  const v = acia(['verify', '--db', server.url, '--json']);
  const report = JSON.parse(v.stdout) as { runs: { runId: string; ok: boolean; problems: unknown[] }[] };
  for (const id of ids) expect(report.runs.find((r) => r.runId === id), `${id}: ${v.stdout}`).toMatchObject({ ok: true });
  const db = new pg.Pool({ connectionString: server.url });
  try {
    const twice = await db.query(
      `SELECT run_id, (line::jsonb)->'data'->>'taskId' AS task FROM acia_ledger WHERE run_id = ANY($1) AND (line::jsonb)->>'type' = 'TASK_COMPLETED'
       GROUP BY 1, 2 HAVING count(*) > 1`,
      [ids],
    );
    expect(twice.rows).toEqual([]);
  } finally {
    await db.end();
  }
}

if (postgresBin() === null && process.env.ACIA_TEST_REQUIRE_POSTGRES === '1') throw new Error('ACIA_TEST_REQUIRE_POSTGRES=1 but no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)');

describe.skipIf(postgresBin() === null)('fleet faults', () => {
  it('PostgreSQL stops for 10 s mid-run and starts again: workers and runs survive, nothing lost or done twice', async () => {
    const remote = bareRemote('faults-pg');
    const ids = [submit('happy', remote, 4000), submit('fix-loop', remote, 4000), submit('parallel', remote, 4000)];
    startWorker('p1');
    startWorker('p2');
    const db = new pg.Pool({ connectionString: server.url });
    try {
      const started = async () => (await db.query("SELECT DISTINCT run_id FROM acia_ledger WHERE run_id = ANY($1) AND line LIKE '%\"TASK_STARTED\"%'", [ids])).rowCount ?? 0;
      for (let i = 0; i < 160 && (await started()) < 2; i++) await new Promise((r) => setTimeout(r, 250));
      expect(await started(), workerLog).toBeGreaterThanOrEqual(2);
    } finally {
      await db.end();
    }
    server.stop();
    await new Promise((r) => setTimeout(r, 10_000));
    server.start();
    const rows = await waitForRuns(ids, (s) => !['queued', 'running'].includes(s), 150_000);
    for (const id of ids) expect(rows.get(id)?.status, `${id}: ${rows.get(id)?.message}\n${workerLog.slice(-4000)}`).toBe('succeeded');
    await checkLedgers(ids);
    for (const id of ids) expect(git(remote, 'show', `acia/${id}:src/title-case.js`)).toContain('titleCase');
    // Both workers lived through it.
    const status = JSON.parse(acia(['fleet', 'status', '--db', server.url, '--json']).stdout) as { workers: { name: string; alive: boolean }[] };
    expect(status.workers.filter((w) => w.alive).map((w) => w.name).sort()).toEqual(['p1', 'p2']);
  }, 240_000);

  it('the remote rejects pushes for a while: the worker retries and the run succeeds; always: the run stops with the reason', async () => {
    const remote = bareRemote('faults-push');
    const gate = join(tempDir('faults-gate'), 'reject');
    const hook = join(remote, 'hooks', 'pre-receive');
    writeFileSync(hook, `#!/bin/sh\nif [ -e '${gate}' ]; then echo "pushes are frozen: $(cat '${gate}')" >&2; exit 1; fi\nexit 0\n`);
    chmodSync(hook, 0o755);

    writeFileSync(gate, 'release in progress');
    const flaky = submit('happy', remote, 0);
    startWorker('g1');
    await new Promise((r) => setTimeout(r, 3000));
    rmSync(gate);
    const ok = await waitForRuns([flaky], (s) => !['queued', 'running'].includes(s), 90_000);
    expect(ok.get(flaky)?.status, `${ok.get(flaky)?.message}\n${workerLog.slice(-3000)}`).toBe('succeeded');
    expect(git(remote, 'show', `acia/${flaky}:src/title-case.js`)).toContain('titleCase');

    writeFileSync(gate, 'the repository is archived');
    const refused = submit('happy', remote, 0);
    const rows = await waitForRuns([refused], (s) => !['queued', 'running'].includes(s), 120_000);
    const row = rows.get(refused);
    expect(row?.status, workerLog.slice(-3000)).toBe('error');
    expect(row?.message).toMatch(/rejected.*pushes are frozen: the repository is archived/);
    const listed = acia(['runs', '--db', server.url]);
    expect(listed.stdout).toMatch(new RegExp(`${refused}\\s+error.*\\n\\s+.*the remote rejected the push of \\S+ \\(5 attempts\\): pushes are frozen: the repository is archived`));
    await checkLedgers([flaky, refused]);

    // Nothing was lost: once the remote takes pushes again, the run resumes from its ledger and succeeds.
    rmSync(gate);
    const resumed = acia(['resume', refused, '--db', server.url]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const after = await waitForRuns([refused], (s) => !['queued', 'running'].includes(s), 90_000);
    expect(after.get(refused)?.status, `${after.get(refused)?.message}\n${workerLog.slice(-3000)}`).toBe('succeeded');
    expect(git(remote, 'show', `acia/${refused}:src/title-case.js`)).toContain('titleCase');
    await checkLedgers([refused]);
  }, 240_000);

  it('an outage longer than the worker\'s patience fails the run in hand cleanly; it is resumed from its ledger when the database is back', async () => {
    const remote = bareRemote('faults-patience');
    const runId = submit('happy', remote, 4000);
    startWorker('q1', ['--db-patience', '2']);
    const db = new pg.Pool({ connectionString: server.url });
    try {
      const started = async () => (await db.query("SELECT 1 FROM acia_ledger WHERE run_id = $1 AND line LIKE '%\"TASK_STARTED\"%'", [runId])).rowCount !== 0;
      for (let i = 0; i < 160 && !(await started()); i++) await new Promise((r) => setTimeout(r, 250));
      expect(await started(), workerLog).toBe(true);
    } finally {
      await db.end();
    }
    server.stop();
    await new Promise((r) => setTimeout(r, 10_000));
    server.start();
    const rows = await waitForRuns([runId], (s) => !['queued', 'running', 'error'].includes(s), 120_000);
    expect(rows.get(runId)?.status, `${rows.get(runId)?.message}\n${workerLog.slice(-4000)}`).toBe('succeeded');
    await checkLedgers([runId]);
    expect(git(remote, 'show', `acia/${runId}:src/title-case.js`)).toContain('titleCase');
    // It did fail and come back: the worker said why, and the ledger records the resume.
    expect(workerLog).toMatch(new RegExp(`${runId}: .*(ECONNREFUSED|database)`));
    const after = new pg.Pool({ connectionString: server.url });
    try {
      const types = (await after.query<{ line: string }>('SELECT line FROM acia_ledger WHERE run_id = $1 ORDER BY seq', [runId])).rows.map((r) => (JSON.parse(r.line) as { type: string }).type);
      expect(types, workerLog.slice(-3000)).toContain('RUN_RESUMED');
    } finally {
      await after.end();
    }
  }, 180_000);
});
