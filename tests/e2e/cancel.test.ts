// `acia cancel` on local runs through the built CLI: a run in another process stops at its next safe
// point (its in-flight model call aborted, not waited out) and exits 5; a run nobody runs (waiting for a
// human) is closed at once; a lock whose pid now belongs to another process does not stall the cancel.
// Each ledger ends CANCEL_REQUESTED, RUN_COMPLETED `cancelled` and verifies; none can be resumed.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acia, ledgerOf, onlyRunId, tempDir } from './helpers.js';
import { editedScript, expectCleanError, sampleRepo, startAcia, zeroLatencyScript } from './cli-helpers.js';

const HAPPY_GOAL = 'Add a titleCase(text) helper that capitalises every word, with a test';
const flags = (script: string) => ['--model', `scripted:${script}`, '--test-command', 'node run-tests.js', '--sandbox', 'off'];

function endsCancelled(repo: string, runId: string, wasRunning: boolean): void {
  const entries = ledgerOf(repo, runId);
  expect(entries.at(-2)).toMatchObject({ type: 'CANCEL_REQUESTED', data: { via: 'local', wasRunning } });
  expect(entries.at(-1)).toMatchObject({ type: 'RUN_COMPLETED', data: { reason: 'cancelled' } });
  const v = acia(['verify', runId, '--repo', repo]);
  expect(v.code, v.stdout + v.stderr).toBe(0);
  expectCleanError(acia(['resume', runId, '--repo', repo]), 2, /is finished \(it was cancelled\); there is nothing to resume/);
  expect(existsSync(join(repo, '.acia', 'runs', runId, 'cancel')), 'the request is gone once it took effect').toBe(false);
}

describe('acia cancel on a local run', () => {
  it('stops a run another process is running at its next safe point: the model call in flight is aborted', async () => {
    const repo = sampleRepo('cancel-running');
    // The Dev agent's first reply would take 10 minutes: only an aborted call ends the run in seconds.
    const script = editedScript('happy', (turns) => {
      for (const t of turns) t.latencyMs = t.caller === 'dev:t1' ? 600_000 : 0;
    });
    const run = startAcia(['run', HAPPY_GOAL, '--repo', repo, ...flags(script)]);
    const deadline = Date.now() + 60_000;
    while (!/t1 started/.test(run.output()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const runId = onlyRunId(repo);
    // Followed from another terminal while it runs: the same lines the run prints, until its session ends.
    const follow = startAcia(['logs', runId, '--repo', repo, '--follow']);
    const started = Date.now();
    const cancel = acia(['cancel', runId, '--repo', repo]);
    expect(cancel.code, cancel.stdout + cancel.stderr).toBe(0);
    expect(cancel.stdout).toContain(`cancelled ${runId}: it stopped at its next safe point`);
    const r = await run.done;
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(r.code, r.stderr).toBe(5);
    expect(r.stdout).toMatch(new RegExp(`^run ${runId}: cancelled — cancelled by \\S+; it stopped at its next safe point`, 'm'));
    expect(r.stdout).toContain('cannot be resumed');
    endsCancelled(repo, runId, true);
    const followed = await follow.done;
    expect(followed.code, followed.stderr).toBe(0);
    // `acia logs` prints what the progress view printed (its time column counts from the first entry).
    const lines = (text: string) => text.split('\n').filter((l) => /^\d\d:\d\d /.test(l)).map((l) => l.slice(6));
    expect(lines(followed.stdout)).toEqual(lines(r.stderr));
    expect(lines(followed.stdout).at(-1)).toMatch(/^team\s+run cancelled: cancelled by/);
    expect(lines(acia(['logs', runId, '--repo', repo]).stdout)).toEqual(lines(r.stderr));
    // Nothing after the request: the aborted task merged nothing, and the run branch is still the base.
    expect(ledgerOf(repo, runId).some((e) => e.type === 'MERGE' || e.type === 'TASK_COMPLETED')).toBe(false);
    expect(readFileSync(join(repo, '.acia', 'wiki', 'runs', `${runId}.md`), 'utf8')).toMatch(/\*\*cancelled\*\*: cancelled by/);
    const show = acia(['show', runId, '--repo', repo]);
    expect(show.stdout).toMatch(/cancel requested by \S+ \(local\)/);
  }, 120_000);

  it('closes a run nobody runs (waiting for a human) at once, even when a reused pid sits in its lock; a finished run is refused', () => {
    const repo = sampleRepo('cancel-waiting');
    const waiting = acia(['run', HAPPY_GOAL, '--repo', repo, '--max-iterations', '1', ...flags(zeroLatencyScript('escalate', tempDir('cancel-escalate')))]);
    expect(waiting.code, waiting.stderr).toBe(3);
    const runId = onlyRunId(repo);
    // As a crash leaves it when the system later gives the pid to another process: this test's own pid,
    // alive, but not the process that took the lock (it started at another time).
    const lock = join(repo, '.acia', 'runs', runId, 'lock');
    writeFileSync(lock, JSON.stringify({ pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), procStart: 1 }));
    const cancel = acia(['cancel', runId, '--repo', repo, '--timeout', '5']);
    expect(cancel.code, cancel.stdout + cancel.stderr).toBe(0);
    expect(cancel.stdout).toContain(`cancelled ${runId}: nothing was running it`);
    endsCancelled(repo, runId, false);
    expect(JSON.parse(readFileSync(join(repo, '.acia', 'runs', runId, 'manifest.json'), 'utf8'))).toMatchObject({ status: 'cancelled' });
    expect(acia(['runs', '--repo', repo]).stdout).toMatch(new RegExp(`${runId}\\s+cancelled`));
    expectCleanError(acia(['cancel', runId, '--repo', repo]), 2, /is already cancelled/);
    const done = sampleRepo('cancel-done');
    expect(acia(['run', HAPPY_GOAL, '--repo', done, ...flags(zeroLatencyScript('happy', tempDir('cancel-happy')))]).code).toBe(0);
    expectCleanError(acia(['cancel', onlyRunId(done), '--repo', done]), 2, /is finished \(it succeeded\); there is nothing to cancel/);
    expectCleanError(acia(['cancel', '20990101-000000-abcdef', '--repo', done]), 2, /no run 20990101-000000-abcdef/);
  }, 120_000);
});
