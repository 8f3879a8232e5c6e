import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/core/acm/canonical-json.js';
import { AciaError } from '../../../src/core/errors.js';
import { RecordingClient, ReplayClient, replayLookup, requestHash, type CallRecord } from '../../../src/core/llm/record-replay.js';
import { ScriptedClient } from '../../../src/core/llm/scripted-client.js';
import type { LlmRequest } from '../../../src/core/llm/types.js';

const req = (content: string, caller = 'dev:t1'): LlmRequest => ({
  model: 'claude-sonnet-5-5',
  system: 'sys',
  tools: [],
  messages: [{ role: 'user', content }],
  maxTokens: 100,
  caller,
});

function memoryBlobs(): { putBlob(c: string): Promise<string>; getBlob(r: string): Promise<string>; size: () => number } {
  const blobs = new Map<string, string>();
  return {
    putBlob: (c) => {
      const ref = `sha256:${sha256Hex(c)}`;
      blobs.set(ref, c);
      return Promise.resolve(ref);
    },
    getBlob: (r) => Promise.resolve(blobs.get(r) ?? ''),
    size: () => blobs.size,
  };
}

describe('record/replay', () => {
  it('hashes only what the model sees', () => {
    expect(requestHash(req('a', 'pm'))).toBe(requestHash({ ...req('a', 'qa:t9'), runId: 'r', stepId: 's' }));
    expect(requestHash(req('a'))).not.toBe(requestHash(req('b')));
    expect(requestHash(req('a'))).not.toBe(requestHash({ ...req('a'), temperature: 0.2 }));
  });

  it('round-trips: recorded responses are served back by request hash', async () => {
    const blobs = memoryBlobs();
    const records: CallRecord[] = [];
    const live = new RecordingClient(
      new ScriptedClient({ version: 1, turns: [{ caller: 'dev:t1', text: 'first' }, { caller: 'dev:t1', toolCalls: [{ name: 'x', input: { a: 1 } }] }] }),
      blobs,
      (r) => {
        records.push(r);
      },
    );
    const one = await live.complete(req('a'));
    const two = await live.complete(req('b'));
    expect(one.recording?.requestHash).toBe(requestHash(req('a')));
    expect(records.map((r) => r.responseRef)).toEqual([one.recording?.responseRef, two.recording?.responseRef]);
    expect(blobs.size()).toBe(2);

    const replay = new ReplayClient(await replayLookup(records, (ref) => blobs.getBlob(ref)));
    const { recording: _a, ...oneStored } = one;
    const { recording: _b, ...twoStored } = two;
    expect(await replay.complete(req('b'))).toEqual(twoStored);
    expect(await replay.complete(req('a'))).toEqual(oneStored);
  });

  it('fails loudly on divergence, naming the caller and the hash', async () => {
    const replay = new ReplayClient(() => undefined);
    const e: unknown = await replay.complete(req('new question', 'qa:t3')).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(AciaError);
    expect((e as AciaError).code).toBe('REPLAY_DIVERGED');
    expect((e as AciaError).message).toContain('"qa:t3"');
    expect((e as AciaError).message).toContain(requestHash(req('new question')));
  });
});
