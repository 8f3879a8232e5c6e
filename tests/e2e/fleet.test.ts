// The fleet on a real PostgreSQL: a forked chain is impossible, an unreachable database is one line,
// and kill -9 of the worker running a run hands it to another. (Many runs over several workers, the
// answer to an escalation and the reading commands: fleet-scale.test.ts; faults: fleet-faults.test.ts.)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acia, git, tempDir } from './helpers.js';
import { useFleet, type FleetHarness, fleetAvailable, rewriteScript } from './fleet-harness.js';

let fleet: FleetHarness;

describe.skipIf(!fleetAvailable())('the fleet on PostgreSQL', () => {
  useFleet((f) => (fleet = f));

  it('refuses a second writer of the same seq: a forked chain is impossible', async () => {
    const { openPgLedger, migrateLedger } = await import('../../src/core/ledger/pg-ledger.js');
    const db = fleet.db;
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
  }, 60_000);

  it('a fleet command with no database says so in one line', () => {
    const r = acia(['runs', '--db', 'postgres://nobody@127.0.0.1:1/none']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^acia: cannot reach the fleet database/);
  });

  it('kill -9 of the worker running a run: another worker resumes it from the database and the pushed branches', async () => {
    const remote = fleet.remote('fleet-kill');
    // The Dev agent's first reply is slow, so the kill lands while its task runs.
    const { runId, script } = fleet.submit('happy', remote, (turns) => {
      for (const t of turns) t.latencyMs = 0;
      turns.find((t) => t.caller === 'dev:t1')!.latencyMs = 6000;
    });
    const doomed = fleet.startWorker('doomed');
    await fleet.until('t1 to start on the doomed worker', () => fleet.taskStarted(runId), 30_000);
    doomed.kill('SIGKILL');
    // The slow reply was only there for the kill to land in: the rescuer's model answers at once.
    rewriteScript(script, (turns) => {
      for (const t of turns) t.latencyMs = 0;
    });
    fleet.startWorker('rescuer');
    const row = await fleet.finished(runId, 120_000);
    expect(row.status, fleet.log).toBe('succeeded');
    expect(row.worker).toBe('rescuer');

    const out = fleet.exportAndVerify(runId, 'fleet-kill-export');
    const entries = readFileSync(join(out, '.acia', 'runs', runId, 'ledger.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type: string; data: { taskId?: string } });
    expect(entries.some((e) => e.type === 'RUN_RESUMED')).toBe(true);
    expect(entries.filter((e) => e.type === 'TASK_COMPLETED' && e.data.taskId === 't1')).toHaveLength(1);
    expect(git(remote, 'show', `acia/${runId}:src/title-case.js`)).toContain('titleCase');
    // The worker that finished the run wrote its replay bundle (from the database) before marking it finished.
    const bundle = join(fleet.cacheOf('rescuer'), 'bundles', runId);
    const verified = acia(['verify', bundle]);
    expect(verified.stdout + verified.stderr, fleet.log).toContain(`ok   ${runId}`);
    expect(JSON.parse(readFileSync(join(bundle, 'metadata.json'), 'utf8'))).toMatchObject({ version: '0.5', runId, status: 'succeeded' });
  }, 240_000);
});
