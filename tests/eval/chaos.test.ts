// A seeded subset of the chaos bench (bench/chaos.mjs runs 200): the demo scenarios with perturbed
// model turns, through the library. No run may end `succeeded` while its branch's tests fail.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runChaosTrial, summarizeChaos, type ChaosTrial } from '../../src/eval/chaos-trials.js';

const SCENARIOS = join(import.meta.dirname, '..', '..', 'workspace', 'scenarios');
const work = mkdtempSync(join(tmpdir(), 'acia-chaos-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function trial(scenario: string, seed: number, rate: number): Promise<ChaosTrial> {
  return runChaosTrial({
    scenarioDir: join(SCENARIOS, scenario),
    seed,
    rate,
    workDir: join(work, `${scenario}-${seed}-${rate}`),
  });
}

describe('chaos model on the demo scenarios', () => {
  it('stays truthful over 8 seeded perturbed runs, and mostly recovers', async () => {
    const trials: ChaosTrial[] = [];
    for (const seed of [11, 12]) for (const scenario of ['happy', 'fix-loop', 'parallel', 'plan-b']) trials.push(await trial(scenario, seed, 0.25));
    const s = summarizeChaos(trials);
    expect(s.runs).toBe(8);
    expect(s.injections).toBeGreaterThanOrEqual(8);
    expect(s.untruthful, JSON.stringify(trials.filter((t) => t.reason === 'succeeded' && t.branchTestsPass !== true))).toBe(0);
    // Every run that ends succeeded has a branch whose tests pass; most runs recover (the bench's goal is 90%).
    expect(s.succeededShare, JSON.stringify(s.byReason)).toBeGreaterThanOrEqual(0.75);
  }, 240_000);

  it('perturbs the same calls for the same seed', async () => {
    const a = await trial('happy', 21, 0.3);
    const b = await trial('happy', 21, 0.3);
    expect(a.injections.length).toBeGreaterThan(0);
    expect(b.injections).toEqual(a.injections);
    expect(b.reason).toBe(a.reason);
  }, 60_000);
});
