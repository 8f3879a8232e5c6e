// Plan approval on the fleet, through the built CLI: `acia submit --approve-plan` makes the run wait after
// planning with nobody holding it; `acia resume <run> --db --answer ...` from any machine answers the gate,
// and a worker runs the answer through the same checks as a local resume. An answer the gate does not take
// (a plan that does not exist) leaves the run waiting with the reason, rather than losing it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acia } from './helpers.js';
import { useFleet, type FleetHarness, editedScript, fleetAvailable, scenarioOf } from './fleet-harness.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';

let fleet: FleetHarness;

async function waitFor(runId: string, done: (status: string) => boolean): Promise<string> {
  await fleet.settled([runId], 120_000, done).catch(() => undefined);
  return (await fleet.runRow(runId))?.status ?? 'missing';
}

describe.skipIf(!fleetAvailable())('plan approval on the fleet', () => {
  useFleet((f) => (fleet = f));

  it('the run waits at the gate; a wrong answer is refused and it keeps waiting; switch runs the other plan', async () => {
    const s = scenarioOf('plan-b');
    const file = editedScript('plan-b', () => undefined);
    const args = ['submit', s.goal, '--repo', fleet.remote('fleet-direct'), '--base', 'main', '--db', fleet.url, '--json', '--model', `scripted:${file}`, '--approve-plan'];
    args.push('--test-command', s.settings.testCommand, '--parallel', '1', '--sandbox', sandboxAvailable() ? 'auto' : 'off');
    const sub = acia(args);
    expect(sub.code, sub.stderr).toBe(0);
    const runId = (JSON.parse(sub.stdout) as { runId: string }).runId;
    fleet.startWorker('d1', { concurrency: 1 });
    expect(await waitFor(runId, (st) => st !== 'queued' && st !== 'running'), fleet.log).toBe('awaiting_human');

    const wrong = acia(['resume', runId, '--db', fleet.url, '--answer', 'switch plan-Z']);
    expect(wrong.code, wrong.stderr).toBe(0); // queued: the worker checks it against the plans
    const refused = await waitFor(runId, (st) => st !== 'queued' && st !== 'running');
    const row = await fleet.runRow(runId);
    expect(refused, `${fleet.log}\n${JSON.stringify(row)}`).toBe('awaiting_human');
    expect(row?.message).toMatch(/your answer was refused: there is no plan plan-Z \(plans: plan-A, plan-B\)/);
    // Nothing of the refused answer is in the ledger (the check came before any entry).
    const before = readFileSync(join(fleet.exportAndVerify(runId, 'fleet-direct-waiting'), '.acia', 'runs', runId, 'ledger.jsonl'), 'utf8');
    expect(before).not.toContain('RUN_RESUMED');
    expect(before).not.toContain('plan-Z');

    const right = acia(['resume', runId, '--db', fleet.url, '--answer', 'switch']);
    expect(right.code, right.stderr).toBe(0);
    expect(await waitFor(runId, (st) => st !== 'queued' && st !== 'running' && st !== 'awaiting_human'), fleet.log).toBe('succeeded');
    const out = fleet.exportAndVerify(runId, 'fleet-direct');
    const entries = readFileSync(join(out, '.acia', 'runs', runId, 'ledger.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });
    const asked = entries.filter((e) => e.type === 'ESCALATION_REQUESTED').map((e) => e.data.reason);
    expect(asked[0]).toBe('plan_approval');
    const responses = entries.filter((e) => e.type === 'HUMAN_RESPONSE').map((e) => e.data);
    expect(responses).toHaveLength(1);
    expect(responses[0]).toMatchObject({ action: 'switch' });
  }, 300_000);
});
