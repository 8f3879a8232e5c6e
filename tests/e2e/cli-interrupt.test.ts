// Ctrl-C through the built CLI: exit 130, a ledger that verifies, RUN_COMPLETED aborted, a resume hint,
// and `acia resume` finishing the run on a scripted model. The resume scheduling regression (fewer slots
// than interrupted tasks) is tested in-process in tests/team/executor.test.ts.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acia, ledgerOf, onlyRunId, tempDir } from './helpers.js';
import { startAcia, zeroLatencyScript } from './cli-helpers.js';

/** Starts the parallel demo and interrupts it once the dev tasks are running. */
async function interruptedParallelDemo(): Promise<{ repo: string; runId: string; code: number; stdout: string; stderr: string }> {
  const repo = join(tempDir('sigint'), 'repo');
  const run = startAcia(['demo', '--scenario', 'parallel', '--dir', repo]);
  await new Promise<void>((resolve) => {
    const poll = setInterval(() => {
      if (/t4 started \(dev\.implement/.test(run.output())) {
        clearInterval(poll);
        resolve();
      }
    }, 50);
    // a run that ends first fails the assertions below instead of hanging here
    void run.done.then(() => {
      clearInterval(poll);
      resolve();
    });
  });
  run.child.kill('SIGINT');
  const r = await run.done;
  return { repo, runId: onlyRunId(repo), ...r };
}

function tasksOf(repo: string, runId: string): Record<string, string> {
  const status: Record<string, string> = {};
  for (const e of ledgerOf(repo, runId)) {
    const d = e.data as { taskId?: string };
    if (d.taskId === undefined) continue;
    if (e.type === 'TASK_STARTED') status[d.taskId] = 'running';
    if (e.type === 'TASK_COMPLETED') status[d.taskId] = 'completed';
    if (e.type === 'TASK_FAILED') status[d.taskId] = 'failed';
  }
  return status;
}

describe('SIGINT during a run', () => {
  it('exits 130 with a verifiable ledger and a resume hint; resume then finishes the run', async () => {
    const { repo, runId, code, stdout, stderr } = await interruptedParallelDemo();
    expect(code, stderr).toBe(130);
    expect(stderr).toContain('stopping after the current step');
    expect(stdout).toContain(`acia resume ${runId}`);
    const last = ledgerOf(repo, runId).at(-1)!;
    expect(last.type).toBe('RUN_COMPLETED');
    expect(last.data).toMatchObject({ reason: 'aborted' });
    expect(acia(['verify', runId, '--repo', repo]).code).toBe(0);

    const script = zeroLatencyScript('parallel', tempDir('sigint-script'));
    const resumed = acia(['resume', runId, '--repo', repo, '--model', `scripted:${script}`, '--sandbox', 'off', '--parallel', '4']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(new RegExp(`^run ${runId}: succeeded`));
    expect(tasksOf(repo, runId)).toEqual({ t1: 'completed', t2: 'completed', t3: 'completed', t4: 'completed', t5: 'completed' });
    expect(acia(['verify', runId, '--repo', repo]).code).toBe(0);
  });
});
