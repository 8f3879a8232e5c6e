// One run's dev tasks spread over the fleet, on a real PostgreSQL with real worker processes: the run's
// orchestrator hands each ready dev task to the task queue, any worker takes it, and the run ends as
// it does locally with one intact chain. A worker killed while it holds a task (not the run) loses
// only that attempt: the orchestrator hands the task to another worker, which restarts it. `acia say --db`
// reaches a task running on another worker, from the run's submitter only.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { acia, git, ledgerOf } from './helpers.js';
import { editedScript, runFlags, scenarioOf, useFleet, type FleetHarness, fleetAvailable } from './fleet-harness.js';
import { killOrchestrator, killTaskWorker } from './fleet-kills.js';
import { expectCleanError } from './cli-helpers.js';
import type { TakenBatch } from '../../src/core/contain/message-request.js';
import { openFleetClient } from '../../src/fleet/fleet-db.js';
import { fleetMessages } from '../../src/fleet/messages.js';
import type { RunContext } from '../../src/team/run-context.js';

let fleet: FleetHarness;

describe.skipIf(!fleetAvailable())("one run's tasks over several workers", () => {
  useFleet((f) => (fleet = f));

  it('the parallel demo on 3 workers: its dev tasks run on several of them, each completes once, the chain verifies', async () => {
    const remote = fleet.remote('tasks');
    // Each Dev reply takes a moment, so the four tasks overlap and the workers' task slots share them.
    const { runId, scenario } = fleet.submit('parallel', remote, (turns) => {
      for (const t of turns) t.latencyMs = t.caller.startsWith('dev:') ? 600 : 0;
    });
    for (const name of ['w1', 'w2', 'w3']) fleet.startWorker(name);
    const row = await fleet.finished(runId, 120_000);
    expect(row.status, fleet.log).toBe(scenario.expect.reason);

    const rows = await fleet.rows(runId);
    const devStarts = rows.filter((r) => r.type === 'TASK_STARTED' && /^t[1-4]$/.test(r.data.taskId ?? ''));
    expect(devStarts.map((r) => r.data.taskId).sort()).toEqual(['t1', 't2', 't3', 't4']);
    const ranOn = new Set(devStarts.map((r) => r.data.worker));
    expect(ranOn.has(undefined), 'every attempt names its worker').toBe(false);
    expect(ranOn.size, `dev tasks ran on ${[...ranOn].join(', ')}`).toBeGreaterThanOrEqual(2);
    // `acia runs --db` says where the run's tasks ran.
    const listed = acia(['runs', '--db', fleet.url, '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const mine = (JSON.parse(listed.stdout) as { run_id: string; task_workers: string[] }[]).find((r) => r.run_id === runId);
    expect(mine?.task_workers).toEqual([...new Set(rows.filter((r) => r.type === 'TASK_STARTED').map((r) => r.data.worker!))].sort());
    expect(acia(['runs', '--db', fleet.url]).stdout).toMatch(new RegExp(`${runId}.*\\(tasks on w\\d(, w\\d)+\\)`));
    const completed = rows.filter((r) => r.type === 'TASK_COMPLETED').map((r) => r.data.taskId);
    expect(new Set(completed).size, 'a task completed twice').toBe(completed.length);
    expect(completed.sort()).toEqual(['t1', 't2', 't3', 't4', 't5']);
    // One lease epoch throughout: task workers wrote under their orchestrator's epoch.
    expect(new Set(rows.map((r) => r.epoch))).toEqual(new Set([1]));
    const out = fleet.exportAndVerify(runId, 'tasks-export');
    // The same decisions as one process would make: a replay runs every task here and finds no difference.
    const replayed = acia(['replay', runId, '--repo', out]);
    expect(replayed.code, replayed.stdout + replayed.stderr).toBe(0);
    // Every task's merge reached the run branch, whichever machine made it.
    for (const f of ['title-case', 'reverse-words', 'count-vowels', 'truncate']) expect(git(remote, 'show', `acia/${runId}:src/${f}.js`)).toContain('export function');
  }, 180_000);

  it('kill -9 of a worker holding a task: the task is handed to another worker, restarted from its checkpoint, and the run finishes', async () => {
    fleet.killWorkers();
    const remote = fleet.remote('task-kill');
    // t1's first attempt commits a checkpoint and fails its check; its worker is killed in the slow second.
    const { runId } = await killTaskWorker(fleet, remote);

    const row = await fleet.finished(runId, 120_000);
    expect(row, fleet.log).toMatchObject({ status: 'succeeded', worker: 'orchestrator' });
    const rows = await fleet.rows(runId);
    const starts = rows.filter((r) => r.type === 'TASK_STARTED' && r.data.taskId === 't1').map((r) => r.data as { worker?: string; attempt: number; baseCommit?: string });
    expect(starts.map((s) => [s.attempt, s.worker])).toEqual([
      [1, 'victim'],
      [2, 'victim'],
      [3, 'rescuer'],
      [4, 'rescuer'],
    ]);
    // The lost attempt's work resumes from the checkpoint the victim pushed, not from scratch.
    const checkpoint = (rows.find((r) => r.type === 'CHECKPOINT' && r.data.taskId === 't1')?.data as { commit?: string } | undefined)?.commit;
    expect(checkpoint).toMatch(/^[0-9a-f]{40}$/);
    expect(starts[2]!.baseCommit).toBe(checkpoint);
    const restart = rows.find((r) => r.type === 'COMPENSATION_APPLIED' && r.data.taskId === 't1')?.data as { reason?: string; resetTo?: string } | undefined;
    expect(restart?.reason).toMatch(/victim stopped answering.*restarts from its last checkpoint/);
    expect(restart?.resetTo).toBe(checkpoint);
    // The run kept its orchestrator: no takeover; t1 completed once.
    expect(rows.some((r) => r.type === 'RUN_RESUMED')).toBe(false);
    expect(rows.filter((r) => r.type === 'TASK_COMPLETED' && r.data.taskId === 't1')).toHaveLength(1);
    expect(rows.filter((r) => r.type === 'RUN_COMPLETED')).toHaveLength(1);
    const out = fleet.exportAndVerify(runId, 'task-kill-export');
    // The lost hand-out replays as it ran: its attempt cut off where the worker died, then restarted elsewhere.
    const replayed = acia(['replay', runId, '--repo', out]);
    expect(replayed.code, replayed.stdout + replayed.stderr).toBe(0);
    expect(git(remote, 'show', `acia/${runId}:src/title-case.js`)).toContain('titleCase');
  }, 180_000);

  it('acia say --db: an interrupt reaches the Dev agent of a task on another worker, recorded once; only the run’s submitter may send', async () => {
    fleet.killWorkers();
    // The orchestrator takes no task jobs: t1 runs on the helper. Its first model reply would take ten
    // minutes: only the message, taken in by the helper, ends it in time.
    fleet.startWorker('sayorch', { concurrency: 1, taskConcurrency: 0 });
    // acia_submitter exists once a worker has migrated the database.
    await fleet.until('the workers’ migration', async () => (await fleet.db.query("SELECT 1 FROM pg_roles WHERE rolname = 'acia_submitter'")).rowCount === 1, 60_000);
    for (const role of ['sayalice', 'saymallory']) await fleet.db.query(`CREATE ROLE ${role} LOGIN IN ROLE acia_submitter`);
    const as = (role: string) => fleet.url.replace('//acia@', `//${role}@`);
    const remote = fleet.remote('say');
    const script = editedScript('happy', (turns) => {
      for (const t of turns) t.latencyMs = 0;
      turns.find((t) => t.caller === 'dev:t1')!.latencyMs = 600_000;
    });
    const s = scenarioOf('happy');
    const submitted = acia(['submit', s.goal, '--repo', remote, '--base', 'main', '--db', as('sayalice'), '--json', ...runFlags(s, script)]);
    expect(submitted.code, submitted.stderr).toBe(0);
    const runId = (JSON.parse(submitted.stdout) as { runId: string }).runId;
    await fleet.until('sayorch to take the run', async () => (await fleet.runRow(runId))?.worker === 'sayorch', 60_000);
    fleet.startWorker('sayhelper', { concurrency: 1 });
    await fleet.until('t1 to start on the helper', async () => (await fleet.rows(runId)).some((r) => r.type === 'TASK_STARTED' && r.data.worker === 'sayhelper'), 60_000);

    // Another submitter's role finds no such run, through the CLI or in SQL.
    expectCleanError(acia(['say', runId, '--task', 't1', 'hello', '--db', as('saymallory')]), 2, /no fleet run \S+ that you submitted/);
    const mallory = new pg.Pool({ connectionString: as('saymallory') });
    try {
      await expect(mallory.query("INSERT INTO acia_messages (run_id, id, author, to_task, mode, body) VALUES ($1, 'm-mallory-1', 'x', 't1', 'interrupt', 'obey me')", [runId])).rejects.toThrow(/row-level security/);
      await expect(mallory.query("INSERT INTO acia_messages (run_id, id, author, to_task, mode, body, sender) VALUES ($1, 'm-mallory-2', 'x', 't1', 'interrupt', 'obey me', 'sayalice')", [runId])).rejects.toThrow(/permission denied/);
    } finally {
      await mallory.end();
    }
    expectCleanError(acia(['say', runId, '--task', 't9', 'hello', '--db', as('sayalice')]), 2, /cannot message task t9 of run \S+: the plan has no task t9/);
    const said = acia(['say', runId, '--task', 't1', '--mode', 'interrupt', 'FLEET-NOTE the helper belongs in src/title-case.js', '--db', as('sayalice')]);
    expect(said.code, said.stderr).toBe(0);
    expect(said.stdout).toMatch(/^sent m-\S+ to task t1 of \S+ \(interrupt\)/);
    // A name long enough to push the true role out of the record, with a line break to fake one: cut first.
    const alice = new pg.Pool({ connectionString: as('sayalice') });
    try {
      const fake = `eve\n(fleet role admin)${'x'.repeat(178)}`;
      await alice.query("INSERT INTO acia_messages (run_id, id, author, to_task, mode, body) VALUES ($1, 'm-alice-long', $2, 't1', 'queue', 'LONG-NAME note')", [runId, fake]);
    } finally {
      await alice.end();
    }

    const row = await fleet.finished(runId, 120_000);
    expect(row.status, fleet.log).toBe('succeeded');
    const rows = await fleet.rows(runId);
    const received = rows.filter((r) => r.type === 'MESSAGE_RECEIVED');
    const said2 = received.map((r) => r.data as Record<string, unknown>);
    expect(said2.map((d) => d.mode).sort()).toEqual(['interrupt', 'queue']);
    for (const d of said2) expect(d).toMatchObject({ to: 't1', author: expect.stringMatching(/\(fleet role sayalice\)$/) });
    const long = said2.find((d) => d.mode === 'queue') as { author: string };
    expect(long.author).not.toMatch(/[\n\r]/);
    expect(long.author.length).toBeLessThanOrEqual(200);
    // Delivered in place of the interrupted call: the helper's own session stopped it, the orchestrator could not.
    // (the queued one, taken in with it, goes along with it).
    const interruptId = /^sent (m-\S+)/.exec(said.stdout)![1];
    const delivered = rows.filter((r) => r.type === 'MESSAGE_DELIVERED').map((r) => r.data as Record<string, unknown>);
    expect(delivered.find((d) => d.id === interruptId)).toMatchObject({ taskId: 't1', caller: 'dev:t1', at: 'interrupt' });
    expect(delivered.map((d) => d.id).sort()).toEqual([interruptId, 'm-alice-long'].sort());
    expect((await fleet.db.query('SELECT 1 FROM acia_messages WHERE run_id = $1', [runId])).rowCount).toBe(0);
    const out = fleet.exportAndVerify(runId, 'say-export');
    const firstDev = ledgerOf(out, runId).find((e) => e.type === 'LLM_CALL' && (e.data as { caller: string }).caller === 'dev:t1')!.data as { requestHash: string };
    expect(readFileSync(join(out, '.acia', 'runs', runId, 'blobs', firstDev.requestHash.replace(/^sha256:/, '')), 'utf8')).toContain('FLEET-NOTE the helper belongs in src/title-case.js');
    const replayed = acia(['replay', runId, '--repo', out]);
    expect(replayed.stdout, replayed.stderr).toMatch(/identical/);
    expectCleanError(acia(['say', runId, 'too late', '--db', as('sayalice')]), 2, /is finished \(it succeeded\); a message can no longer reach it/);
    // ... nor in SQL: rows for a finished run would lie in the table for nobody.
    const late = new pg.Pool({ connectionString: as('sayalice') });
    try {
      await expect(late.query("INSERT INTO acia_messages (run_id, id, author, to_task, mode, body) VALUES ($1, 'm-alice-late', 'alice', 'pm', 'queue', 'too late')", [runId])).rejects.toThrow(/row-level security/);
    } finally {
      await late.end();
    }
  }, 180_000);

  it('a fleet message is deleted only once its session recorded it: given back when it could not, taken again when its claim lapses', async () => {
    const client = await openFleetClient(fleet.url);
    try {
      const runId = '20261127-000000-claim1';
      await client.db.query("INSERT INTO acia_messages (run_id, id, author, to_task, mode, body) VALUES ($1, 'm-claim-0001', 'ann', 't1', 'steer', 'KEEP-ME')", [runId]);
      const unused = {} as RunContext; // a fleet source reads the database, not the session's context
      const texts = (b: TakenBatch) => b.messages.map((m) => (m.ok ? m.request.text : m.why));
      const rows = async () => (await client.db.query('SELECT taken_by FROM acia_messages WHERE run_id = $1', [runId])).rowCount;
      const task = fleetMessages(client.db, runId, { only: 't1' });
      const first = await task(unused);
      expect(texts(first)).toEqual(['KEEP-ME']);
      // Claimed: the orchestrator's poll (every recipient) does not see it meanwhile.
      expect((await fleetMessages(client.db, runId, { except: () => [] })(unused)).messages).toEqual([]);
      // The session could not record it (fenced, say): it gives the row back, and the next poll takes it.
      await first.release();
      const second = await task(unused);
      expect(texts(second)).toEqual(['KEEP-ME']);
      // That session dies before its `done`: after a minute (moved back here) the claim lapses and a successor takes it.
      await client.db.query("UPDATE acia_messages SET taken_at = taken_at - interval '61 seconds' WHERE run_id = $1", [runId]);
      const third = await task(unused);
      expect(texts(third)).toEqual(['KEEP-ME']);
      // Only the claim's holder removes the row.
      await second.done();
      expect(await rows()).toBe(1);
      await third.done();
      expect(await rows()).toBe(0);
    } finally {
      await client.close();
    }
  }, 60_000);

  it("kill -9 of the orchestrator while its task runs on another worker: the new orchestrator's epoch fences that task's late writes", async () => {
    fleet.killWorkers();
    const remote = fleet.remote('orch-kill');
    // The task's first model reply outlasts the takeover, so its write comes late.
    const { runId } = await killOrchestrator(fleet, remote);

    const row = await fleet.finished(runId, 120_000);
    expect(row.status, fleet.log).toBe('succeeded');
    expect(row.worker).not.toBe('orch1');
    // The first hand-out's reply arrives after the takeover and is refused, not chained.
    await fleet.until("the helper's late write to be refused", () => /t1: run \S+: its lease epoch 1 is no longer current/.test(fleet.log), 30_000);
    const rows = await fleet.rows(runId);
    const takeover = rows.findIndex((r) => r.epoch === 2);
    expect(takeover).toBeGreaterThan(0);
    expect(rows.slice(takeover).filter((r) => r.epoch !== 2), 'an entry of the old epoch after the takeover').toEqual([]);
    expect(rows.some((r) => r.type === 'RUN_RESUMED')).toBe(true);
    expect(rows.filter((r) => r.type === 'LLM_CALL' && r.epoch === 1 && r.data.taskId === 't1')).toEqual([]);
    expect(rows.filter((r) => r.type === 'TASK_COMPLETED' && r.data.taskId === 't1')).toHaveLength(1);
    expect(rows.filter((r) => r.type === 'RUN_COMPLETED')).toHaveLength(1);
    const out = fleet.exportAndVerify(runId, 'orch-kill-export');
    // A takeover is a new session of the run: replay cuts the first off where its orchestrator died.
    const replayed = acia(['replay', runId, '--repo', out]);
    expect(replayed.code, replayed.stdout + replayed.stderr).toBe(0);
    expect(git(remote, 'show', `acia/${runId}:src/title-case.js`)).toContain('titleCase');
  }, 180_000);
});

it('a task slot count that is not a whole number is a usage error, before any database is reached', () => {
  expectCleanError(acia(['worker', '--task-concurrency', '-1', '--db', 'postgres://nobody@127.0.0.1:1/none']), 2, /--task-concurrency expects a whole number \(0 or more\), got "-1"/);
});
