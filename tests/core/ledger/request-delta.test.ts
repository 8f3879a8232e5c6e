// Model requests recorded as deltas of the request before them (core/ledger/request-delta.ts): the whole
// request comes back byte for byte and is held to its requestHash, verify catches a delta that does not
// rebuild or whose base is gone, the bundle writes such requests whole where it promises them, and the
// team records a delta only where the request continues the previous one.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson, contentAddress, frozenJson, sha256Hex } from '../../../src/core/acm/canonical-json.js';
import { collectBlobRefs } from '../../../src/core/ledger/blob-refs.js';
import { buildBundle, verifyBundle } from '../../../src/core/ledger/bundle.js';
import { openRunLedger } from '../../../src/core/ledger/file-ledger.js';
import { runDirOf } from '../../../src/core/ledger/manifest.js';
import { RecordedRequests, type RequestRecord } from '../../../src/core/ledger/request-delta.js';
import { verifyRun } from '../../../src/core/ledger/verify.js';
import type { LlmRequest, Message } from '../../../src/core/llm/types.js';
import { MAX_DELTA_CHARS, requestDelta } from '../../../src/team/request-delta.js';
import { fixedClock, tempDir } from '../../helpers/sample-run.js';

const usage = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 };
const msg = (role: 'user' | 'assistant', text: string): Message => frozenJson(role === 'user' ? { role, content: text } : { role, content: [{ type: 'text', text }] });
const visible = (r: LlmRequest) => ({ model: r.model, system: r.system, tools: r.tools, messages: r.messages, maxTokens: r.maxTokens });

/** Three requests of one agent session, each the one before plus a reply and the next user message. */
function conversation(): LlmRequest[] {
  const tools = frozenJson([{ name: 'read_file', description: 'reads', inputSchema: { type: 'object' } }]);
  const base = { model: 'm', system: 'you are a dev', tools, maxTokens: 1000, caller: 'dev:t1' };
  const m = [msg('user', 'task'), msg('assistant', 'reading'), msg('user', 'file text'), msg('assistant', 'writing'), msg('user', 'written')];
  return [{ ...base, messages: m.slice(0, 1) }, { ...base, messages: m.slice(0, 3) }, { ...base, messages: m.slice(0, 5) }];
}

/** A run whose dev session's requests are recorded as the team records them: the first whole, the rest as deltas. */
async function runWithDeltas() {
  const repo = tempDir();
  const runId = '20260102-030405-delta1';
  const runDir = runDirOf(repo, runId);
  const ledger = await openRunLedger(runDir, runId, { clock: fixedClock(), create: true });
  const requests = conversation();
  let sent: { request: LlmRequest; hash: string } | null = null;
  for (const request of requests) {
    const text = canonicalJson(visible(request));
    const delta = requestDelta(sent, request);
    const requestHash = delta ? contentAddress(visible(request)) : await ledger.putBlob(text);
    const responseRef = await ledger.putBlob('{"content":[]}');
    await ledger.append({ actor: 'pm', type: 'LLM_CALL', data: { caller: 'pm', model: 'm', requestHash, responseRef, usage, costUsd: null, stopReason: 'end_turn', durationMs: 1, ...(delta ? { request: delta } : {}) } });
    sent = { request, hash: requestHash };
  }
  await ledger.close();
  const calls = ledger.entries().flatMap((e) => (e.type === 'LLM_CALL' ? [e.data] : []));
  return { repo, runId, runDir, requests, calls };
}

const readRun = (runDir: string) => (ref: string) => {
  try {
    return readFileSync(join(runDir, 'blobs', ref.slice('sha256:'.length)));
  } catch {
    return null;
  }
};

describe('requests recorded as deltas', () => {
  it('are rebuilt byte for byte, from a blob only for the first', async () => {
    const { runDir, requests, calls } = await runWithDeltas();
    expect(calls.map((c) => c.request === undefined)).toEqual([true, false, false]);
    expect(calls[2]!.request).toMatchObject({ after: calls[1]!.requestHash, keep: 3 });
    const recorded = new RecordedRequests(calls, readRun(runDir));
    calls.forEach((c, i) => {
      const got = recorded.get(c.requestHash);
      expect(got.ok && got.text).toBe(canonicalJson(visible(requests[i]!)));
      expect(recorded.isDelta(c.requestHash)).toBe(i > 0);
    });
    // Only the first request is a blob: a delta's requestHash is not a blob reference.
    expect(collectBlobRefs(calls[1]).has(calls[1]!.requestHash)).toBe(false);
    expect(collectBlobRefs(calls[0]).has(calls[0]!.requestHash)).toBe(true);
    expect(await verifyRun(runDir)).toMatchObject({ ok: true, problems: [] });
  });

  it('verify names a delta that rebuilds another request, and one whose base is gone', async () => {
    const { runDir, calls } = await runWithDeltas();
    const forged: RequestRecord[] = calls.map((c, i) => (i === 2 ? { ...c, request: { ...(c.request as object), keep: 1 } } : c));
    const rebuilt = new RecordedRequests(forged, readRun(runDir)).get(calls[2]!.requestHash);
    expect(rebuilt).toMatchObject({ ok: false, missing: false, message: expect.stringContaining('does not hash to it') });
    expect(new RecordedRequests(calls, () => null).get(calls[2]!.requestHash)).toMatchObject({ ok: false, missing: true });

    rmSync(join(runDir, 'blobs', calls[0]!.requestHash.slice('sha256:'.length)));
    const report = await verifyRun(runDir);
    expect(report.ok).toBe(false);
    const lines = readFileSync(join(runDir, 'ledger.jsonl'), 'utf8').split('\n');
    const seqOf = (hash: string) => lines.findIndex((l) => l.includes(`"requestHash":"${hash}"`));
    expect(report.problems).toEqual([
      { seq: seqOf(calls[0]!.requestHash), code: 'BLOB_MISSING', message: expect.any(String) },
      { seq: seqOf(calls[1]!.requestHash), code: 'BLOB_MISSING', message: expect.stringContaining('base is unavailable') },
      { seq: seqOf(calls[2]!.requestHash), code: 'BLOB_MISSING', message: expect.stringContaining('base is unavailable') },
    ]);
  });

  it('the bundle writes the planner prompts whole and verifies; its ledger keeps the deltas', async () => {
    const { repo, runId, requests, calls } = await runWithDeltas();
    const { dir } = await buildBundle(repo, runId);
    for (const [i, c] of calls.entries()) expect(readFileSync(join(dir, 'planner', 'prompts', c.requestHash.slice('sha256:'.length)), 'utf8')).toBe(canonicalJson(visible(requests[i]!)));
    expect(() => readFileSync(join(dir, 'memory-ledger', 'acia', 'blobs', calls[1]!.requestHash.slice('sha256:'.length)))).toThrow();
    const verified = await verifyBundle(dir);
    expect(verified.problems.filter((p) => p.code !== 'BUNDLE_LAYOUT')).toEqual([]);
  });
});

describe('a response carried in its LLM_CALL', () => {
  it('is no blob file; verify holds it to responseRef; the bundle carries it in its ledger only', async () => {
    const repo = tempDir();
    const runId = '20260102-030405-inline';
    const runDir = runDirOf(repo, runId);
    const ledger = await openRunLedger(runDir, runId, { clock: fixedClock(), create: true });
    const said = '{"content":[{"text":"hi","type":"text"}]}';
    const requestHash = await ledger.putBlob(canonicalJson({ messages: [] }));
    const call = (response: string, responseRef: string) => ({ caller: 'pm', model: 'm', requestHash, responseRef, response, usage, costUsd: null, stopReason: 'end_turn', durationMs: 1 });
    const good = call(said, `sha256:${sha256Hex(said)}`);
    await ledger.append({ actor: 'pm', type: 'LLM_CALL', data: good });
    expect(collectBlobRefs(good)).toEqual(new Set([requestHash]));
    expect(ledger.blobsWritten?.().size).toBe(1);
    expect(await verifyRun(runDir)).toMatchObject({ ok: true, problems: [] });
    const { dir } = await buildBundle(repo, runId);
    expect(readFileSync(join(dir, 'memory-ledger', 'acia', 'ledger.jsonl'), 'utf8')).toContain(JSON.stringify(said).slice(1, -1));
    expect(() => readFileSync(join(dir, 'engine-trace', 'blobs', good.responseRef.slice('sha256:'.length)))).toThrow();
    expect((await verifyBundle(dir)).problems.filter((p) => p.code !== 'BUNDLE_LAYOUT')).toEqual([]);
    // Words the model never said, under the address of what it did say.
    await ledger.append({ actor: 'pm', type: 'LLM_CALL', data: call('{"content":[]}', good.responseRef) });
    await ledger.close();
    expect((await verifyRun(runDir)).problems).toEqual([{ seq: 1, code: 'BLOB_ALTERED', message: expect.stringContaining(good.responseRef) }]);
  });
});

describe('requestDelta (the team decides)', () => {
  it('keeps the unchanged messages by identity, and stores whole what does not continue', () => {
    const [first, second] = conversation();
    const sent = { request: first!, hash: contentAddress(visible(first!)) };
    expect(requestDelta(null, second!)).toBeNull();
    expect(requestDelta(sent, second!)).toEqual({ after: sent.hash, keep: 1, messages: second!.messages.slice(1) });
    // A human's words added to the last user message make it a new object: it is sent again.
    const steered = { ...second!, messages: [msg('user', 'task'), ...second!.messages.slice(1)] };
    expect(requestDelta(sent, steered)).toBeNull();
    expect(requestDelta({ request: second!, hash: 'sha256:x' }, { ...second!, messages: [second!.messages[0]!, msg('assistant', 'other')] })).toMatchObject({ keep: 1 });
    expect(requestDelta(sent, { ...second!, system: 'another prompt' })).toBeNull();
    expect(requestDelta(sent, { ...second!, tools: frozenJson([]) })).toBeNull();
    expect(requestDelta(sent, { ...second!, maxTokens: 5 })).toBeNull();
    expect(requestDelta(sent, { ...second!, messages: [...first!.messages, msg('user', 'x'.repeat(MAX_DELTA_CHARS))] })).toBeNull();
  });
});
