// The fleet on a real PostgreSQL: a forked chain is impossible, an unreachable database is one line,
// kill -9 of the worker running a run hands it to another, and `acia eval --db` grades fleet runs as
// `acia eval` grades local ones. (Many runs over several workers, the
// answer to an escalation and the reading commands: fleet-scale.test.ts; faults: fleet-faults.test.ts.)
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cli-helpers.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';
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
    // The rescuer says so in one line.
    expect(fleet.logs.get('rescuer')).toMatch(new RegExp(`^${runId}: taken over from worker doomed \\(lease epoch \\d+\\); resuming from its ledger$`, 'm'));

    const out = fleet.exportAndVerify(runId, 'fleet-kill-export');
    const entries = readFileSync(join(out, '.acia', 'runs', runId, 'ledger.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type: string; data: { taskId?: string } });
    expect(entries.some((e) => e.type === 'RUN_RESUMED')).toBe(true);
    expect(entries.filter((e) => e.type === 'TASK_COMPLETED' && e.data.taskId === 't1')).toHaveLength(1);
    // The takeover replays as it ran: the first worker's session cut off where it died, then resumed.
    const replayed = acia(['replay', runId, '--repo', out]);
    expect(replayed.code, replayed.stdout + replayed.stderr).toBe(0);
    expect(git(remote, 'show', `acia/${runId}:src/title-case.js`)).toContain('titleCase');
    // The worker that finished the run wrote its replay bundle (from the database) before marking it finished.
    const bundle = join(fleet.cacheOf('rescuer'), 'bundles', runId);
    const verified = acia(['verify', bundle]);
    expect(verified.stdout + verified.stderr, fleet.log).toContain(`ok   ${runId}`);
    expect(JSON.parse(readFileSync(join(bundle, 'metadata.json'), 'utf8'))).toMatchObject({ version: '0.5', runId, status: 'succeeded' });
  }, 240_000);

  it('acia eval --db runs the instances as fleet runs and writes the report a local eval writes', () => {
    // Three instances of the offline suite (resolved, unresolved, a broken PASS_TO_PASS that ends waiting
    // for a human), their sources where they are, their scripts where the workers' policy allows scripts.
    const suite = join(ROOT, 'workspace', 'eval');
    const dir = tempDir('eval-db');
    const picked = ['kind-of-ctor', 'minimist-constructor', 'ms-negative'];
    const lines = readFileSync(join(suite, 'tasks.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { instance_id: string; repo: string });
    writeFileSync(join(dir, 'tasks.jsonl'), lines.filter((l) => picked.includes(l.instance_id)).map((l) => JSON.stringify({ ...l, repo: join(suite, l.repo) })).join('\n'));
    cpSync(join(suite, 'scripts'), join(dir, 'scripts'), { recursive: true });
    const common = [join(dir, 'tasks.jsonl'), '--model', `scripted:${join(dir, 'scripts')}`, '--parallel', '3', '--quiet', ...(sandboxAvailable() ? [] : ['--sandbox', 'off'])];
    fleet.startWorker('evaluator', { concurrency: 3 });
    const local = acia(['eval', ...common, '--out', join(dir, 'local')], { timeoutMs: 180_000 });
    expect(local.code, local.stderr).toBe(0);
    const onFleet = acia(['eval', ...common, '--out', join(dir, 'fleet'), '--db', fleet.url, '--remotes', join(fleet.remotesDir, 'eval')], { timeoutMs: 180_000 });
    expect(onFleet.code, onFleet.stderr + fleet.log.slice(-3000)).toBe(0);

    type Report = Record<string, unknown> & { instances: Record<string, unknown>[] };
    const report = (which: string) => JSON.parse(readFileSync(join(dir, which, 'report.json'), 'utf8')) as Report;
    const [a, b] = [report('local'), report('fleet')];
    const lists = ['total_instances', 'submitted_instances', 'completed_instances', 'resolved_ids', 'unresolved_ids', 'empty_patch_ids', 'error_ids', 'incomplete_ids', 'schema_version', 'exits', 'models'];
    for (const k of lists) expect(b[k], k).toEqual(a[k]);
    expect(a.resolved_ids).toEqual(['kind-of-ctor']);
    expect(a.unresolved_ids).toEqual(['minimist-constructor', 'ms-negative']);
    const same = (i: Record<string, unknown>) => ({ id: i.instance_id, resolved: i.resolved, reason: i.reason, f2p: i.failToPass, p2p: i.passToPass, tests: i.tests_status, applied: i.patch_successfully_applied });
    expect(b.instances.map(same)).toEqual(a.instances.map(same));
    // The same patches, graded the same way; each fleet run's ledger, exported beside its checkout, holds the grade and verifies.
    const predictions = (which: string) => readFileSync(join(dir, which, 'predictions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { instance_id: string }).sort((x, y) => x.instance_id.localeCompare(y.instance_id));
    expect(predictions('fleet')).toEqual(predictions('local'));
    for (const id of picked) {
      const r = JSON.parse(readFileSync(join(dir, 'fleet', 'instances', `${id}.json`), 'utf8')) as { runId: string; ledger: string };
      expect(readFileSync(r.ledger, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { type: string }).type).at(-1), id).toBe('EVAL_GRADED');
      const v = acia(['verify', r.runId, '--repo', join(dir, 'fleet', 'work', id, 'repo')]);
      expect(v.code, v.stdout + v.stderr).toBe(0);
      // And the run is an ordinary fleet run: it is in the database, with its submitter's label.
      expect(acia(['runs', '--db', fleet.url]).stdout).toContain(`${r.runId}`);
    }
    expect(acia(['eval', 'compare', join(dir, 'local'), join(dir, 'fleet')]).stdout).toMatch(/^resolved\s+1\/3 \(33\.33%\)\s+1\/3 \(33\.33%\)$/m);
  }, 300_000);
});
