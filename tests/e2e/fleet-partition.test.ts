// A network partition between one worker and the database, on a real PostgreSQL: the worker's
// connection goes through a proxy the test cuts mid-task, until its lease expires and another worker
// takes the run (a new lease epoch). When the link comes back, the cut-off worker's late writes
// arrive and are refused by the fence; the chain verifies, nothing of the old epoch follows the
// takeover, and the run finishes once, on the new worker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acia, git } from './helpers.js';
import { useFleet, type FleetHarness, fleetAvailable, rewriteScript } from './fleet-harness.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

let proxy: TcpProxy;
let fleet: FleetHarness;

describe.skipIf(!fleetAvailable())('a worker cut off from the database', () => {
  useFleet((f) => (fleet = f));
  // Registered after useFleet's hooks: starts once the server is up, and (after hooks run in reverse) closes before it stops.
  beforeAll(async () => {
    proxy = await startTcpProxy('127.0.0.1', Number(new URL(fleet.url).port));
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it('is fenced out once another worker took its run: its late writes are refused, the chain stays whole', async () => {
    const remote = fleet.remote('partition');
    // The Dev agent's first reply is slow, so the cut lands while the task runs.
    const { runId, script } = fleet.submit('happy', remote, (turns) => {
      for (const t of turns) t.latencyMs = 0;
      turns.find((t) => t.caller === 'dev:t1')!.latencyMs = 5000;
    });
    const behindProxy = new URL(fleet.url);
    behindProxy.port = String(proxy.port);
    fleet.startWorker('cutoff', { url: behindProxy.toString(), concurrency: 1 });
    await fleet.until('t1 to start on the worker behind the proxy', async () => (await fleet.rows(runId)).some((r) => r.type === 'TASK_STARTED' && r.data.taskId === 't1'), 60_000);

    proxy.cut();
    // The slow reply was only there for the cut to land in: the rescuer's restart of t1 gets its reply at once.
    rewriteScript(script, (turns) => {
      for (const t of turns) t.latencyMs = 0;
    });
    fleet.startWorker('rescuer');
    // The lease runs out (10 s without a heartbeat); the rescuer takes the run at epoch 2 and restarts t1.
    await fleet.until('the rescuer to restart t1 at epoch 2', async () => (await fleet.rows(runId)).some((r) => r.epoch === 2 && r.type === 'TASK_STARTED'), 60_000);
    proxy.restore();

    const row = await fleet.finished(runId, 90_000);
    expect(row.status, fleet.log).toBe('succeeded');
    // The cut-off worker woke up, found itself fenced, and dropped the run without a word in its row.
    await fleet.until('the cut-off worker to drop the run', () => fleet.log.includes(`${runId}: dropped`), 30_000);
    expect(fleet.log).toMatch(/LEDGER_FENCED|lease epoch 1 is no longer current/);
    expect(await fleet.runRow(runId)).toMatchObject({ status: 'succeeded', worker: 'rescuer' });

    const rows = await fleet.rows(runId);
    const takeover = rows.findIndex((r) => r.epoch === 2);
    expect(takeover).toBeGreaterThan(0);
    expect(rows.slice(0, takeover).every((r) => r.epoch === 1)).toBe(true);
    expect(rows.slice(takeover).filter((r) => r.epoch !== 2), 'an entry of the old epoch after the takeover').toEqual([]);
    expect(rows.filter((r) => r.type === 'RUN_COMPLETED')).toHaveLength(1);
    expect(rows.filter((r) => r.type === 'TASK_COMPLETED' && r.data.taskId === 't1')).toHaveLength(1);
    // Each attempt says where it ran: the first on the cut-off worker, the restart (made while the link was
    // still cut) on the rescuer. On a loaded machine t1 may be started again, a retry at epoch 2 (asserted
    // above) handed out as a task job to any worker with a free slot, the cut-off one too once it is back.
    const starts = rows.filter((r) => r.type === 'TASK_STARTED' && r.data.taskId === 't1').map((r) => r.data.worker);
    expect(starts[0]).toBe('cutoff');
    expect(starts[1]).toBe('rescuer');
    const out = fleet.exportAndVerify(runId, 'partition-export');
    const replayed = acia(['replay', runId, '--repo', out]);
    expect(replayed.code, replayed.stdout + replayed.stderr).toBe(0);
    expect(git(remote, 'show', `acia/${runId}:src/title-case.js`)).toContain('titleCase');
  }, 180_000);
});
