// A third party's ledger with forged request deltas (core/ledger/request-delta.ts): verify names each one and
// stays bounded in time and memory, whatever the deltas claim (cycles, chains, counts, fan-outs).
import { describe, expect, it } from 'vitest';
import { canonicalJson, sha256Hex } from '../../../src/core/acm/canonical-json.js';
import { buildBundle, verifyBundle } from '../../../src/core/ledger/bundle.js';
import { openRunLedger } from '../../../src/core/ledger/file-ledger.js';
import { runDirOf } from '../../../src/core/ledger/manifest.js';
import type { LedgerEntry } from '../../../src/core/ledger/entry.js';
import { findInlineBlob } from '../../../src/core/ledger/inline-blobs.js';
import { RecordedRequests, type RequestRecord } from '../../../src/core/ledger/request-delta.js';
import { verifyRun } from '../../../src/core/ledger/verify.js';
import { fixedClock, tempDir } from '../../helpers/sample-run.js';

const usage = { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 };
const addressOf = (value: unknown) => `sha256:${sha256Hex(canonicalJson(value))}`;
const fake = (i: number) => `sha256:${i.toString(16).padStart(64, '0')}`;

/** A run whose LLM_CALLs carry the given payload fields (requestHash, request) after one whole request blob. */
async function runWith(calls: (baseHash: string) => { requestHash: string; request?: unknown }[]) {
  const repo = tempDir();
  const runId = '20260102-030405-hostil';
  const runDir = runDirOf(repo, runId);
  const ledger = await openRunLedger(runDir, runId, { clock: fixedClock(), create: true });
  const base = { model: 'm', messages: [{ role: 'user', content: 'task' }] };
  const baseHash = await ledger.putBlob(canonicalJson(base));
  const said = '{}';
  const common = { caller: 'pm', model: 'm', responseRef: addressOf({}), response: said, usage, costUsd: null, stopReason: 'end_turn', durationMs: 1 };
  await ledger.append({ actor: 'pm', type: 'LLM_CALL', data: { ...common, requestHash: baseHash } });
  for (const c of calls(baseHash)) await ledger.append({ actor: 'pm', type: 'LLM_CALL', data: { ...common, ...c } });
  await ledger.close();
  return { repo, runId, runDir, base, baseHash };
}

describe('verify of forged request deltas', () => {
  it('names a cycle, an impossible keep and a second delta under a hash already rebuilt', async () => {
    const next = { role: 'user', content: 'more' };
    const { repo, runId, runDir } = await runWith((baseHash) => {
      const good = { model: 'm', messages: [{ role: 'user', content: 'task' }, next] };
      return [
        { requestHash: fake(1), request: { after: fake(2), keep: 0, messages: [] } },
        { requestHash: fake(2), request: { after: fake(1), keep: 0, messages: [] } },
        { requestHash: fake(3), request: { after: baseHash, keep: 2 ** 31, messages: [] } },
        { requestHash: addressOf(good), request: { after: baseHash, keep: 1, messages: [next] } },
        // The same address again, with words that do not rebuild it: every stored delta is held to its hash.
        { requestHash: addressOf(good), request: { after: baseHash, keep: 1, messages: [{ role: 'user', content: 'forged' }] } },
      ];
    });
    const report = await verifyRun(runDir);
    expect(report.ok).toBe(false);
    const altered = report.problems.filter((p) => p.code === 'BLOB_ALTERED').map((p) => p.seq);
    expect(altered).toEqual([1, 2, 3, 5]);
    // The same of the bundle a third party would ship: its ledger copy is verified as the run is.
    const { dir } = await buildBundle(repo, runId);
    const bundled = await verifyBundle(dir);
    expect(bundled.ok).toBe(false);
    expect(bundled.problems.filter((p) => p.code === 'BLOB_ALTERED').map((p) => p.seq)).toEqual([1, 2, 3, 5]);
  });

  it('walks a long chain once, however the ledger orders it', () => {
    // Deltas listed newest first, each on the one before, down to a base nobody stored.
    const n = 200_000;
    const records: RequestRecord[] = [];
    for (let i = n; i >= 1; i--) records.push({ requestHash: fake(i), request: { after: fake(i - 1), keep: 0, messages: [] } });
    const requests = new RecordedRequests(records, () => null);
    expect(requests.get(fake(n))).toMatchObject({ ok: false, missing: true });
    expect(requests.get(fake(1))).toMatchObject({ ok: false, missing: true });
  }, 120_000);

  it('stops rebuilding past its budget: a few lines that would expand to gigabytes', () => {
    const base = { model: 'm', messages: [{ role: 'user', content: 'x'.repeat(1 << 20) }] };
    const baseText = canonicalJson(base);
    const baseHash = `sha256:${sha256Hex(baseText)}`;
    // Each a true delta of the 1 MB base: valid, and each rebuild hashes the whole megabyte again.
    const records: RequestRecord[] = Array.from({ length: 40 }, (_, i) => {
      const messages = [{ role: 'user', content: String(i) }];
      return { requestHash: addressOf({ ...base, messages: [...base.messages, ...messages] }), request: { after: baseHash, keep: 1, messages } };
    });
    const requests = new RecordedRequests(records, (ref) => (ref === baseHash ? Buffer.from(baseText) : null), { maxRebuiltChars: 20 << 20 });
    const got = records.map((r) => requests.get(r.requestHash));
    expect(got.slice(0, 15).every((g) => g.ok)).toBe(true);
    expect(got.at(-1)).toMatchObject({ ok: false, missing: false, message: expect.stringContaining('more than') });
  });
});

describe('an inline response read back (acia ui)', () => {
  it('is served only when its bytes are what its responseRef names', () => {
    const said = '{"content":[{"text":"hi","type":"text"}]}';
    const ref = `sha256:${sha256Hex(said)}`;
    const entry = (response: string, seq: number) => ({ seq, ts: '2026-01-02T03:04:05.000Z', runId: 'r', actor: 'pm', type: 'LLM_CALL', v: 2, prevHash: '', hash: '', data: { caller: 'pm', model: 'm', requestHash: ref, responseRef: ref, response, usage, costUsd: null, stopReason: 'end_turn', durationMs: 1 } }) as unknown as LedgerEntry;
    expect(findInlineBlob([entry('{"content":[]}', 0)], ref)).toBeNull();
    expect(findInlineBlob([entry('{"content":[]}', 0), entry(said, 1)], ref)?.toString('utf8')).toBe(said);
  });
});
