// Faults in the fleet, with real components: PostgreSQL stopped for 10 s mid-run and started again,
// and a git remote whose pre-receive hook rejects pushes (for a while, then always). Nothing may be
// lost or done twice: every run finishes (or stops with a clear reason in `acia runs --db`), every
// ledger verifies, no task completes twice. (kill -9 of a worker mid-task: tests/e2e/fleet.test.ts.)
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acia, git, tempDir } from './helpers.js';
import { useFleet, type FleetHarness, fleetAvailable, type Turn } from './fleet-harness.js';

let fleet: FleetHarness;

/** A scenario's script with every latency 0 but the Dev agent's first reply, slowed down so a fault lands mid-task. */
const slowDev = (devLatencyMs: number) => (turns: Turn[]) => {
  for (const t of turns) t.latencyMs = 0;
  const dev = turns.find((t) => t.caller.startsWith('dev:'));
  if (dev) dev.latencyMs = devLatencyMs;
};

/** Nothing lost, nothing done twice: the chain verifies from the database and no task completed twice. */
async function checkLedgers(ids: string[]): Promise<void> {
  const v = acia(['verify', '--db', fleet.url, '--json']);
  const report = JSON.parse(v.stdout) as { runs: { runId: string; ok: boolean; problems: unknown[] }[] };
  for (const id of ids) expect(report.runs.find((r) => r.runId === id), `${id}: ${v.stdout}`).toMatchObject({ ok: true });
  const twice = await fleet.db.query(
    `SELECT run_id, (line::jsonb)->'data'->>'taskId' AS task FROM acia_ledger WHERE run_id = ANY($1) AND (line::jsonb)->>'type' = 'TASK_COMPLETED'
     GROUP BY 1, 2 HAVING count(*) > 1`,
    [ids],
  );
  expect(twice.rows).toEqual([]);
}

describe.skipIf(!fleetAvailable())('fleet faults', () => {
  useFleet((f) => (fleet = f), { killWorkersAfterEach: true });

  it('PostgreSQL stops for 10 s mid-run and starts again: workers and runs survive, nothing lost or done twice', async () => {
    const remote = fleet.remote('faults-pg');
    const ids = ['happy', 'fix-loop', 'parallel'].map((name) => fleet.submit(name, remote, slowDev(4000)).runId);
    fleet.startWorker('p1');
    fleet.startWorker('p2');
    const started = async () => (await fleet.db.query("SELECT DISTINCT run_id FROM acia_ledger WHERE run_id = ANY($1) AND line LIKE '%\"TASK_STARTED\"%'", [ids])).rowCount ?? 0;
    await fleet.until('two runs to start a task', async () => (await started()) >= 2, 40_000);
    fleet.server!.stop();
    // The outage itself is what this test is about: ten seconds, as long as a lease.
    await new Promise((r) => setTimeout(r, 10_000));
    fleet.server!.start();
    const rows = await fleet.settled(ids, 150_000);
    for (const id of ids) expect(rows.get(id)?.status, `${id}: ${rows.get(id)?.message}\n${fleet.log.slice(-4000)}`).toBe('succeeded');
    await checkLedgers(ids);
    for (const id of ids) expect(git(remote, 'show', `acia/${id}:src/title-case.js`)).toContain('titleCase');
    // Both workers lived through it, each said so in one line, and status shows the outage each rode out.
    const status = JSON.parse(acia(['fleet', 'status', '--db', fleet.url, '--json']).stdout) as { workers: { name: string; alive: boolean; dbErrors: number; lastOutage: { seconds: number } | null }[] };
    expect(status.workers.filter((w) => w.alive).map((w) => w.name).sort()).toEqual(['p1', 'p2']);
    for (const name of ['p1', 'p2']) {
      const w = status.workers.find((x) => x.name === name)!;
      expect(w.dbErrors, name).toBeGreaterThan(0);
      // Heartbeats are 2 s apart: the outage as a worker saw it is the 10 s give or take a beat or two.
      expect(w.lastOutage?.seconds, name).toBeGreaterThanOrEqual(7);
      expect(w.lastOutage?.seconds, name).toBeLessThan(30);
      expect(fleet.logs.get(name), name).toMatch(new RegExp(`^worker ${name}: the database was away for \\d+\\.\\d s \\(from \\S+\\); carrying on$`, 'm'));
    }
  }, 240_000);

  it('the remote rejects pushes for a while: the worker retries and the run succeeds; always: the run stops with the reason', async () => {
    const remote = fleet.remote('faults-push');
    const gate = join(tempDir('faults-gate'), 'reject');
    // Each refused push leaves a line here, so the test knows when the remote has said no.
    const refusals = join(tempDir('faults-refusals'), 'log');
    const hook = join(remote, 'hooks', 'pre-receive');
    writeFileSync(hook, `#!/bin/sh\nif [ -e '${gate}' ]; then echo refused >> '${refusals}'; echo "pushes are frozen: $(cat '${gate}')" >&2; exit 1; fi\nexit 0\n`);
    chmodSync(hook, 0o755);
    const refused = () => (existsSync(refusals) ? readFileSync(refusals, 'utf8').split('\n').filter(Boolean).length : 0);

    writeFileSync(gate, 'release in progress');
    const flaky = fleet.submit('happy', remote, slowDev(0)).runId;
    fleet.startWorker('g1');
    // The freeze lasts until the worker's first push was refused; its retry then gets through.
    await fleet.until('the remote to refuse a push', () => refused() >= 1, 60_000);
    rmSync(gate);
    const ok = await fleet.settled([flaky], 90_000);
    expect(ok.get(flaky)?.status, `${ok.get(flaky)?.message}\n${fleet.log.slice(-3000)}`).toBe('succeeded');
    expect(git(remote, 'show', `acia/${flaky}:src/title-case.js`)).toContain('titleCase');

    writeFileSync(gate, 'the repository is archived');
    const before = refused();
    const archived = fleet.submit('happy', remote, slowDev(0)).runId;
    // The row says `error` as the run's manifest is written, and why a moment later, with the run's result.
    const rows = await fleet.settled([archived], 120_000, (s, r) => !['queued', 'running'].includes(s) && r.message !== null);
    const row = rows.get(archived);
    expect(row?.status, fleet.log.slice(-3000)).toBe('error');
    expect(row?.message).toMatch(/rejected.*pushes are frozen: the repository is archived/);
    expect(refused() - before, 'push attempts the remote refused').toBe(5);
    const listed = acia(['runs', '--db', fleet.url]);
    expect(listed.stdout).toMatch(new RegExp(`${archived}\\s+error.*\\n\\s+.*the remote rejected the push of \\S+ \\(5 attempts\\): pushes are frozen: the repository is archived`));
    await checkLedgers([flaky, archived]);

    // Nothing was lost: once the remote takes pushes again, the run resumes from its ledger and succeeds.
    rmSync(gate);
    const resumed = acia(['resume', archived, '--db', fleet.url]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const after = await fleet.settled([archived], 90_000);
    expect(after.get(archived)?.status, `${after.get(archived)?.message}\n${fleet.log.slice(-3000)}`).toBe('succeeded');
    expect(git(remote, 'show', `acia/${archived}:src/title-case.js`)).toContain('titleCase');
    await checkLedgers([archived]);
  }, 240_000);

  it("an outage longer than the worker's patience fails the run in hand cleanly; it is resumed from its ledger when the database is back", async () => {
    const remote = fleet.remote('faults-patience');
    const runId = fleet.submit('happy', remote, slowDev(4000)).runId;
    fleet.startWorker('q1', { extra: ['--db-patience', '2'] });
    await fleet.until('t1 to start', () => fleet.taskStarted(runId), 40_000);
    fleet.server!.stop();
    // The database stays away until the worker has given up on the run in hand (its patience is 2 s).
    const gaveUp = new RegExp(`${runId}: .*(ECONNREFUSED|database)`);
    await fleet.until('the worker to give up on the run', () => gaveUp.test(fleet.log), 60_000);
    fleet.server!.start();
    const rows = await fleet.settled([runId], 120_000, (s) => !['queued', 'running', 'error'].includes(s));
    expect(rows.get(runId)?.status, `${rows.get(runId)?.message}\n${fleet.log.slice(-4000)}`).toBe('succeeded');
    await checkLedgers([runId]);
    expect(git(remote, 'show', `acia/${runId}:src/title-case.js`)).toContain('titleCase');
    // It did fail and come back: the worker said why, and the ledger records the resume.
    expect(fleet.log).toMatch(gaveUp);
    const types = (await fleet.rows(runId)).map((r) => r.type);
    expect(types, fleet.log.slice(-3000)).toContain('RUN_RESUMED');
  }, 180_000);
});
