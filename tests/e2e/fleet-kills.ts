// The two fleet runs that lose a process mid-task, as fleet-tasks.test.ts checks them and as the ledger
// fixtures record them (tests/fixtures/record/record-ledgers.ts). Each starts its own workers and returns
// once the kill is done and the rescuing worker started; the run then finishes on its own.
import { rewriteScript, type FleetHarness } from './fleet-harness.js';

const noLatency = (turns: { latencyMs?: number }[]) => turns.forEach((t) => (t.latencyMs = 0));

/**
 * The happy demo whose t1 commits a checkpoint and fails its check in attempt 1; the worker holding it
 * ("victim") is killed -9 in its slow attempt 2, and "rescuer" is started to take the task over. The run's
 * orchestrator ("orchestrator") takes no task jobs, so every attempt runs elsewhere.
 */
export async function killTaskWorker(fleet: FleetHarness, remote: string): Promise<{ runId: string }> {
  const { runId, script } = fleet.submit('happy', remote, (turns) => {
    noLatency(turns);
    const pm = turns.find((t) => t.caller === 'pm') as unknown as { toolCalls: { input: { plans: { tasks: Record<string, unknown>[] }[] } }[] };
    const t1 = pm.toolCalls[0]!.input.plans[0]!.tasks.find((t) => t.id === 't1')!;
    t1.verification = ['$t1.ready == true'];
    t1.retry = { attempts: 4, baseMs: 0, jitter: false };
    const writes = turns.find((t) => t.caller === 'dev:t1' && JSON.stringify(t).includes('write_file'))!;
    const result = (ready: boolean) => ({ caller: 'dev:t1', latencyMs: 0, toolCalls: [{ name: 'return_result', input: { summary: `titleCase (ready: ${ready})`, facts: { ready } } }] });
    const dev = [writes, result(false), { ...writes, latencyMs: 5000 }, result(true)];
    turns.splice(0, turns.length, ...turns.filter((t) => t.caller !== 'dev:t1'), ...dev);
  });
  fleet.startWorker('orchestrator', { concurrency: 1, taskConcurrency: 0 });
  await fleet.until('the orchestrator to take the run', async () => (await fleet.runRow(runId))?.worker === 'orchestrator', 60_000);
  const victim = fleet.startWorker('victim', { concurrency: 1 });
  const secondAttempt = async () => (await fleet.rows(runId)).some((r) => r.type === 'TASK_STARTED' && r.data.worker === 'victim' && (r.data as { attempt?: number }).attempt === 2);
  await fleet.until("t1's second attempt to start on the victim", secondAttempt, 60_000);
  victim.kill('SIGKILL');
  // The slow reply was only there for the kill to land in: the rescuer's attempts (each task job reads the
  // script afresh) get theirs at once.
  rewriteScript(script, noLatency);
  fleet.startWorker('rescuer', { concurrency: 1 });
  return { runId };
}

/**
 * The happy demo whose t1 runs on "helper" with a first reply that outlasts the takeover (about 10 s after
 * the kill); its orchestrator "orch1" is killed -9 meanwhile and "orch2" is started to take the run over.
 */
export async function killOrchestrator(fleet: FleetHarness, remote: string): Promise<{ runId: string }> {
  const { runId, script } = fleet.submit('happy', remote, (turns) => {
    noLatency(turns);
    turns.find((t) => t.caller === 'dev:t1')!.latencyMs = 20_000;
  });
  const orchestrator = fleet.startWorker('orch1', { concurrency: 1, taskConcurrency: 0 });
  await fleet.until('orch1 to take the run', async () => (await fleet.runRow(runId))?.worker === 'orch1', 60_000);
  fleet.startWorker('helper', { concurrency: 1 });
  await fleet.until('t1 to start on the helper', async () => (await fleet.rows(runId)).some((r) => r.type === 'TASK_STARTED' && r.data.worker === 'helper'), 60_000);
  orchestrator.kill('SIGKILL');
  // The task handed out again after the takeover answers at once (each task job reads the script afresh).
  rewriteScript(script, noLatency);
  fleet.startWorker('orch2', { concurrency: 1, taskConcurrency: 0 });
  return { runId };
}
