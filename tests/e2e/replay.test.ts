// acia replay: identical for an untouched recording, a divergence when a recorded response is changed.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/acm/canonical-json.js';
import type { StoredLedgerEntry } from '../../src/core/ledger/entry-shape.js';
import { entryHash } from '../../src/core/ledger/hash.js';
import { acia, onlyRunId, tempDir } from './helpers.js';

describe('acia replay', () => {
  it('reports a changed model response as a divergence, naming the actor and entry', () => {
    const repo = join(tempDir('replay'), 'repo');
    expect(acia(['demo', '--scenario', 'happy', '--dir', repo, '--quiet']).code).toBe(0);
    const runId = onlyRunId(repo);
    expect(acia(['replay', runId, '--repo', repo]).code).toBe(0);

    // Change what the PM "said": the recorded response (carried in its LLM_CALL) now chooses plan-B, and the
    // chain is sealed again over the change, as a forger would: only the response's own address gives it away.
    const path = join(repo, '.acia', 'runs', runId, 'ledger.jsonl');
    const entries = readFileSync(path, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as StoredLedgerEntry);
    const call = entries.find((e) => e.type === 'LLM_CALL' && e.actor === 'pm')!;
    const data = call.data as { responseRef: string; response: string };
    const ref = data.responseRef.replace('sha256:', '');
    data.response = data.response.replace('"chosenPlanId":"plan-A"', '"chosenPlanId":"plan-B"');
    expect(data.response).toContain('"chosenPlanId":"plan-B"');
    let prevHash = entries[0]!.prevHash;
    for (const e of entries) {
      const { hash: _old, ...rest } = { ...e, prevHash };
      e.prevHash = prevHash;
      e.hash = entryHash(rest);
      prevHash = e.hash;
    }
    writeFileSync(path, entries.map((e) => `${canonicalJson(e)}\n`).join(''));

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
