import { describe, expect, it } from 'vitest';
import { noWait } from './no-wait.js';
import type { StreamChunk } from '../../../src/core/acm/contracts.js';
import { AciaError } from '../../../src/core/errors.js';
import { ScriptedClient } from '../../../src/core/llm/scripted-client.js';
import type { ScriptTurn } from '../../../src/core/llm/script.js';
import type { LlmRequest } from '../../../src/core/llm/types.js';

const request = (caller: string): LlmRequest => ({
  model: 'claude-sonnet-5-5',
  system: 'x'.repeat(400),
  tools: [],
  messages: [{ role: 'user', content: 'do it' }],
  maxTokens: 100,
  caller,
  runId: 'run-1',
  stepId: 'step-1',
});

function client(turns: ScriptTurn[]): { c: ScriptedClient; sleeps: number[] } {
  const { sleeps, sleep, retry } = noWait();
  const c = new ScriptedClient({ version: 1, turns }, { sleep, retry });
  return { c, sleeps };
}

describe('ScriptedClient', () => {
  it('streams token, json_partial, tool_call and final chunks stamped with run and step ids', async () => {
    const { c } = client([{ caller: 'dev:t1', text: 'Let me look at it.', toolCalls: [{ name: 'read_file', input: { path: 'src/index.ts' } }] }]);
    const chunks: StreamChunk[] = [];
    const res = await c.complete(request('dev:t1'), { onChunk: (ch) => chunks.push(ch) });
    expect(res.content).toEqual([
      { type: 'text', text: 'Let me look at it.' },
      { type: 'tool_use', id: 'toolu_dev_t1_1', name: 'read_file', input: { path: 'src/index.ts' } },
    ]);
    expect(new Set(chunks.map((ch) => ch.kind))).toEqual(new Set(['token', 'json_partial', 'tool_call', 'final']));
    expect(chunks.every((ch) => ch.runId === 'run-1' && ch.stepId === 'step-1')).toBe(true);
    expect(res.usage.inputTokens).toBeGreaterThanOrEqual(100);
    expect(res.usage.outputTokens).toBeGreaterThan(0);
  });

  it('spreads the turn latency over the stream through the injected sleep', async () => {
    const { c, sleeps } = client([{ caller: 'pm', text: 'abcdefghi', latencyMs: 400 }]);
    await c.complete(request('pm'));
    expect(sleeps.length).toBeGreaterThan(1);
    expect(Math.round(sleeps.reduce((a, b) => a + b, 0))).toBe(400);
  });

  it('retries scripted 429 and cut faults like a real adapter, then serves the next turn', async () => {
    const { c, sleeps } = client([
      { caller: 'pm', fault: '429', retryAfterS: 3 },
      { caller: 'pm', text: 'partial', fault: 'cut_stream' },
      { caller: 'pm', text: 'done', usage: { inputTokens: 11, outputTokens: 2 } },
    ]);
    const res = await c.complete(request('pm'));
    expect(res.content).toEqual([{ type: 'text', text: 'done' }]);
    expect(res.usage).toEqual({ inputTokens: 11, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 });
    expect(sleeps).toEqual([3000, 750]);
  });

  it('fails a 401 at once and an exhausted script with SCRIPT_EXHAUSTED', async () => {
    const { c } = client([{ caller: 'pm', fault: '401' }]);
    await expect(c.complete(request('pm'))).rejects.toMatchObject({ code: 'LLM_AUTH' });
    await expect(c.complete(request('pm'))).rejects.toMatchObject({ code: 'SCRIPT_EXHAUSTED' });
  });

  it('honours an AbortSignal', async () => {
    const { c } = client([{ caller: 'pm', text: 'never' }]);
    const ac = new AbortController();
    ac.abort();
    const e: unknown = await c.complete(request('pm'), { signal: ac.signal }).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(AciaError);
    expect((e as AciaError).code).toBe('ABORTED');
  });
});
