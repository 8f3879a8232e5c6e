// acia replay: identical for an untouched recording, a divergence when a recorded response is changed.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acia, ledgerOf, onlyRunId, tempDir } from './helpers.js';

describe('acia replay', () => {
  it('reports a changed model response as a divergence, naming the actor and entry', () => {
    const repo = join(tempDir('replay'), 'repo');
    expect(acia(['demo', '--scenario', 'happy', '--dir', repo, '--quiet']).code).toBe(0);
    const runId = onlyRunId(repo);
    expect(acia(['replay', runId, '--repo', repo]).code).toBe(0);

    // Change what the PM "said": the recorded response now chooses plan-B.
    const call = ledgerOf(repo, runId).find((e) => e.type === 'LLM_CALL' && e.actor === 'pm')!;
    const ref = (call.data as { responseRef: string }).responseRef.replace('sha256:', '');
    const blob = join(repo, '.acia', 'runs', runId, 'blobs', ref);
    writeFileSync(blob, readFileSync(blob, 'utf8').replace('"chosenPlanId":"plan-A"', '"chosenPlanId":"plan-B"'));

    const r = acia(['replay', runId, '--repo', repo]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('DIVERGED');
    expect(r.stdout).toMatch(/pm/);
    // and the tampering is visible to verify as well
    const v = acia(['verify', runId, '--repo', repo]);
    expect(v.code).toBe(1);
    expect(v.stdout + v.stderr).toContain(ref.slice(0, 12));
  });
});
