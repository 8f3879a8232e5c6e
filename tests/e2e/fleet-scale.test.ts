// The fleet at the size issue 18 asks for: three real worker processes take twelve submitted runs of
// the demo scenarios (scripted models) from a real PostgreSQL. Each run must end as the same scenario
// ends when run locally (`acia run`, measured here, not assumed), every ledger verifies and exports,
// no task completes twice; and the reading commands (verify, show, replay, bundle, wiki) work on the
// fleet runs straight from the database with --db.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { acia, CLI, git, tempDir } from './helpers.js';
import { cliEnv, expectCleanError, sampleRepo, SCENARIOS, startAcia, zeroLatencyScript } from './cli-helpers.js';
import { postgresBin, startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';

const NAMES = ['happy', 'fix-loop', 'escalate', 'budget', 'parallel', 'plan-b'];
const sandbox = sandboxAvailable() ? 'auto' : 'off';

interface Scenario {
  name: string;
  goal: string;
  settings: { testCommand: string; parallel: number; maxIterations: number; maxTokens?: number };
  expect: { reason: string };
}

const scenario = (name: string) => JSON.parse(readFileSync(join(SCENARIOS, name, 'scenario.json'), 'utf8')) as Scenario;
const runFlags = (s: Scenario, script: string): string[] => [
  '--model',
  `scripted:${script}`,
  '--test-command',
  s.settings.testCommand,
  '--parallel',
  String(s.settings.parallel),
  '--max-iterations',
  String(s.settings.maxIterations),
  '--sandbox',
  sandbox,
  ...(s.settings.maxTokens === undefined ? [] : ['--max-tokens', String(s.settings.maxTokens)]),
];

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

if (postgresBin() === null && process.env.ACIA_TEST_REQUIRE_POSTGRES === '1') throw new Error('ACIA_TEST_REQUIRE_POSTGRES=1 but no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)');

describe.skipIf(postgresBin() === null)('the fleet at scale: 3 workers, 12 runs', () => {
  const submitted = new Map<string, Scenario>();
  const local = new Map<string, string>();

  it('twelve runs end as they do locally; every ledger verifies and exports; no task completes twice', async () => {
    const repo = sampleRepo('scale');
    const remote = join(tempDir('scale-remote'), 'app.git');
    git(repo, 'clone', '-q', '--bare', repo, remote);
    const scripts = tempDir('scale-scripts');
    for (const name of [...NAMES, ...NAMES]) {
      const s = scenario(name);
      const r = acia(['submit', s.goal, '--repo', remote, '--base', 'main', '--db', server.url, '--json', ...runFlags(s, zeroLatencyScript(name, scripts))]);
      expect(r.code, r.stderr).toBe(0);
      submitted.set((JSON.parse(r.stdout) as { runId: string }).runId, s);
    }
    for (const name of ['s1', 's2', 's3']) {
      const w = spawn(process.execPath, [CLI, 'worker', '--db', server.url, '--concurrency', '2', '--name', name, '--cache', tempDir(`scale-cache-${name}`)], { env: cliEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
      w.stderr?.on('data', (d: Buffer) => (workerLog += d.toString()));
      workers.push(w);
    }
    // The same scenarios locally, while the fleet works: what "the same terminal reason" means.
    const localRuns = NAMES.map(async (name) => {
      const s = scenario(name);
      const dir = sampleRepo(`scale-local-${name}`);
      const r = await startAcia(['run', s.goal, '--repo', dir, ...runFlags(s, zeroLatencyScript(name, tempDir(`scale-local-script-${name}`)))], { cwd: dir }).done;
      const runId = readdirSync(join(dir, '.acia', 'runs'))[0]!;
      const manifest = JSON.parse(readFileSync(join(dir, '.acia', 'runs', runId, 'manifest.json'), 'utf8')) as { status: string };
      local.set(name, manifest.status);
      return r.code;
    });
    await Promise.all(localRuns);

    const db = new pg.Pool({ connectionString: server.url });
    try {
      const ids = [...submitted.keys()];
      let rows: { run_id: string; status: string; worker: string | null }[] = [];
      for (const end = Date.now() + 150_000; Date.now() < end; await new Promise((r) => setTimeout(r, 500))) {
        rows = (await db.query<{ run_id: string; status: string; worker: string | null }>('SELECT run_id, status, worker FROM acia_runs WHERE run_id = ANY($1)', [ids])).rows;
        if (rows.length === ids.length && rows.every((r) => !['queued', 'running'].includes(r.status))) break;
      }
      const byId = new Map(rows.map((r) => [r.run_id, r]));
      for (const [runId, s] of submitted) {
        expect(local.get(s.name), `${s.name} locally`).toBe(s.expect.reason);
        expect(byId.get(runId)?.status, `${s.name} (${runId})\n${workerLog.slice(-3000)}`).toBe(local.get(s.name));
      }
      expect(new Set(rows.map((r) => r.worker)).size, 'every worker took runs').toBe(3);

      // No task completed twice, counted in the database's own rows.
      const twice = await db.query<{ run_id: string; task: string; n: string }>(
        `SELECT run_id, (line::jsonb)->'data'->>'taskId' AS task, count(*) AS n FROM acia_ledger
         WHERE run_id = ANY($1) AND (line::jsonb)->>'type' = 'TASK_COMPLETED' GROUP BY 1, 2 HAVING count(*) > 1`,
        [ids],
      );
      expect(twice.rows).toEqual([]);
    } finally {
      await db.end();
    }

    // Every ledger verifies straight from the database, and exports to a directory that verifies offline.
    const all = acia(['verify', '--db', server.url, '--json']);
    expect(all.code, all.stdout + all.stderr).toBe(0);
    const report = JSON.parse(all.stdout) as { ok: boolean; runs: { runId: string; ok: boolean }[] };
    expect(report.runs.map((r) => r.runId).sort()).toEqual([...submitted.keys()].sort());
    const out = sampleRepo('scale-export');
    for (const runId of submitted.keys()) {
      const ex = acia(['export', runId, '--db', server.url, '--repo', out]);
      expect(ex.code, ex.stderr).toBe(0);
    }
    const offline = acia(['verify', '--repo', out, '--json']);
    expect(offline.code, offline.stdout).toBe(0);
    expect((JSON.parse(offline.stdout) as { runs: unknown[] }).runs).toHaveLength(12);
    // The run branches went to the remote.
    for (const [runId, s] of submitted) if (s.expect.reason === 'succeeded') expect(git(remote, 'show', `acia/${runId}:src/title-case.js`), s.name).toContain('titleCase');

    const status = acia(['fleet', 'status', '--db', server.url, '--json']);
    expect(status.code, status.stderr).toBe(0);
    const fleetNow = JSON.parse(status.stdout) as { workers: { name: string; alive: boolean }[]; queued: number; leases: unknown[]; runs: Record<string, number> };
    expect(fleetNow.workers.filter((w) => w.alive).map((w) => w.name).sort()).toEqual(['s1', 's2', 's3']);
    expect(fleetNow.queued).toBe(0);
    expect(fleetNow.leases).toEqual([]);
    expect(fleetNow.runs).toEqual({ succeeded: 8, awaiting_human: 2, budget_exhausted: 2 });

    // A run waiting for a human holds no worker; the answer (from any machine) queues it again, and a worker ends it.
    const [waiting] = [...submitted].find(([, s]) => s.name === 'escalate')!;
    const answered = acia(['resume', waiting, '--answer', 'abort', '--db', server.url]);
    expect(answered.code, answered.stderr).toBe(0);
    const db2 = new pg.Pool({ connectionString: server.url });
    try {
      let status2 = '';
      for (const end = Date.now() + 60_000; Date.now() < end && status2 !== 'aborted'; await new Promise((r) => setTimeout(r, 300))) {
        status2 = (await db2.query<{ status: string }>('SELECT status FROM acia_runs WHERE run_id = $1', [waiting])).rows[0]!.status;
      }
      expect(status2, workerLog.slice(-3000)).toBe('aborted');
      const response = await db2.query<{ line: string }>("SELECT line FROM acia_ledger WHERE run_id = $1 AND line LIKE '%\"HUMAN_RESPONSE\"%'", [waiting]);
      expect((JSON.parse(response.rows[0]!.line) as { data: { action: string } }).data.action).toBe('abort');
    } finally {
      await db2.end();
    }
    expect(acia(['verify', waiting, '--db', server.url]).code).toBe(0);
  }, 240_000);

  it('show, replay, bundle and wiki read a fleet run with --db, with no export', () => {
    const [runId] = [...submitted].find(([, s]) => s.name === 'happy')!;
    const env = { ACIA_DATABASE_URL: server.url };
    const show = acia(['show', runId, '--db'], { env });
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/run succeeded/);
    const json = acia(['show', runId, '--db', server.url, '--json']);
    const types = json.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types[0]).toBe('RUN_STARTED');
    expect(types.at(-1)).toBe('RUN_COMPLETED');

    const replay = acia(['replay', runId, '--db', server.url]);
    expect(replay.stdout + replay.stderr).toContain('identical');
    expect(replay.code).toBe(0);

    const bundleDir = join(tempDir('scale-bundle'), 'b');
    const bundle = acia(['bundle', runId, '--db', server.url, '--out', bundleDir]);
    expect(bundle.code, bundle.stderr).toBe(0);
    expect(acia(['verify', bundleDir]).code).toBe(0);
    // Without --out, in .acia/bundles of the --repo directory, as a local bundle.
    const here = sampleRepo('scale-bundle-default');
    expect(acia(['bundle', runId, '--db', server.url, '--repo', here]).code).toBe(0);
    expect(existsSync(join(here, '.acia', 'bundles', runId, 'manifest.json'))).toBe(true);

    const pages = acia(['wiki', 'list', '--db', server.url]);
    expect(pages.code, pages.stderr).toBe(0);
    for (const id of submitted.keys()) expect(pages.stdout).toContain(`runs/${id}.md`);
    const page = acia(['wiki', 'show', `runs/${runId}.md`, '--db', server.url]);
    expect(page.code, page.stderr).toBe(0);
    expect(page.stdout).toContain('mermaid');
  }, 120_000);

  it('bad input on the fleet reading commands: one clear line, and a cut-off chain fails verification', async () => {
    expectCleanError(acia(['show', '20990101-000000-abcdef', '--db', server.url]), 2, /20990101-000000-abcdef not found in the database/);
    expectCleanError(acia(['verify', '../etc', '--db', server.url]), 2, /\.\.\/etc is not a run id/);
    expectCleanError(acia(['replay', '20990101-000000-abcdef', '--db', 'postgres://nobody@127.0.0.1:1/none']), 2, /cannot reach the fleet database/);
    expectCleanError(acia(['wiki', 'rebuild', '--db', server.url]), 2, /rendered from the database on demand/);
    expectCleanError(acia(['show', '20990101-000000-abcdef', '--db'], { env: { ACIA_DATABASE_URL: '' } }), 2, /no database/);
    // Submitted, not started (no worker is taking runs from this queue now that the test stopped them).
    for (const w of workers) w.kill('SIGKILL');
    const queued = acia(['submit', 'later', '--repo', '/nonexistent', '--db', server.url, '--json']);
    const queuedId = (JSON.parse(queued.stdout) as { runId: string }).runId;
    expectCleanError(acia(['show', queuedId, '--db', server.url]), 2, new RegExp(`fleet run ${queuedId} is queued and has no ledger entries yet`));

    // Cutting the last rows off a run (or rewriting them) is caught against the head the worker anchored.
    const [runId] = [...submitted].find(([, s]) => s.name === 'fix-loop')!;
    const db = new pg.Pool({ connectionString: server.url });
    try {
      await db.query('DELETE FROM acia_ledger WHERE run_id = $1 AND seq >= (SELECT max(seq) - 1 FROM acia_ledger WHERE run_id = $1)', [runId]);
    } finally {
      await db.end();
    }
    const v = acia(['verify', runId, '--db', server.url]);
    expect(v.code, v.stdout + v.stderr).toBe(1);
    expect(v.stdout).toMatch(/^FAIL .* TRUNCATED /m);
  }, 60_000);
});
