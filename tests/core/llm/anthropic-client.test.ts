import { afterEach, describe, expect, it } from 'vitest';
import { noWait } from './no-wait.js';
import type { StreamChunk } from '../../../src/core/acm/contracts.js';
import { AciaError } from '../../../src/core/errors.js';
import { AnthropicClient } from '../../../src/core/llm/anthropic-client.js';
import { startFakeAnthropicServer, type FakeServer } from '../../../src/core/llm/fake-server.js';
import type { Script, ScriptTurn } from '../../../src/core/llm/script.js';
import type { LlmRequest } from '../../../src/core/llm/types.js';
import { failure } from '../../helpers/failure.js';

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function script(...turns: ScriptTurn[]): Script {
  return { version: 1, turns };
}

async function setup(s: Script, maxRetries = 4): Promise<{ client: AnthropicClient; sleeps: number[]; fake: FakeServer }> {
  const fake = await startFakeAnthropicServer({ script: s, host: '127.0.0.1', port: 0 });
  server = fake;
  const { sleeps, sleep, retry } = noWait();
  const client = new AnthropicClient({ apiKey: 'sk-test', baseURL: fake.url, maxRetries, sleep, retry });
  return { client, sleeps, fake };
}

function request(over: Partial<LlmRequest> = {}): LlmRequest {
  return {
    model: 'claude-sonnet-5-5',
    system: 'You are the developer agent. Follow the repository conventions.',
    tools: [
      { name: 'read_file', description: 'Read a file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } },
      { name: 'write_file', description: 'Write a file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } },
    ],
    messages: [{ role: 'user', content: 'Task t2: add a --json flag to the export command.' }],
    maxTokens: 1024,
    caller: 'dev:t2',
    stableMessageIndex: 0,
    ...over,
  };
}

describe('AnthropicClient through the fake server (real SDK)', () => {
  it('streams text as token chunks and assembles the final message', async () => {
    const { client, fake } = await setup(script({ caller: 'dev:t2', text: 'I will read the export command first.' }));
    const chunks: StreamChunk[] = [];
    const res = await client.complete(request(), { onChunk: (c) => chunks.push(c) });
    expect(res.content).toEqual([{ type: 'text', text: 'I will read the export command first.' }]);
    expect(res.stopReason).toBe('end_turn');
    expect(res.requestId).toBe('req_fake_0001');
    const tokens = chunks.filter((c) => c.kind === 'token');
    expect(tokens.length).toBeGreaterThan(1);
    expect(tokens.map((c) => (c.kind === 'token' ? c.text : '')).join('')).toBe('I will read the export command first.');
    expect(chunks.at(-1)?.kind).toBe('final');
    expect(chunks.map((c) => c.seq)).toEqual(chunks.map((_, i) => i));
    expect(fake.requests[0]?.caller).toBe('dev:t2');
    expect(fake.requests[0]?.headers['x-api-key']).toBeUndefined();
  });

  it('assembles a tool_use whose JSON input arrives in several pieces', async () => {
    const input = { path: 'src/commands/export.ts', reason: 'find the flag parser' };
    const { client } = await setup(script({ caller: 'dev:t2', text: 'Reading.', toolCalls: [{ name: 'read_file', input }] }));
    const chunks: StreamChunk[] = [];
    const res = await client.complete(request(), { onChunk: (c) => chunks.push(c) });
    expect(res.stopReason).toBe('tool_use');
    expect(res.content[1]).toEqual({ type: 'tool_use', id: 'toolu_dev_t2_1', name: 'read_file', input });
    const partials = chunks.filter((c) => c.kind === 'json_partial');
    expect(partials.length).toBeGreaterThan(1);
    expect(partials.map((c) => (c.kind === 'json_partial' ? c.partialJson : '')).join('')).toBe(JSON.stringify(input));
    expect(chunks.some((c) => c.kind === 'tool_call' && c.toolName === 'read_file')).toBe(true);
  });

  it('retries a 429 after the retry-after delay, then succeeds', async () => {
    const { client, sleeps, fake } = await setup(script({ caller: 'dev:t2', fault: '429', retryAfterS: 7 }, { caller: 'dev:t2', text: 'ok' }));
    const res = await client.complete(request());
    expect(res.content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(sleeps).toEqual([7000]);
    expect(fake.requests).toHaveLength(2);
  });

  it('retries a 529 overloaded with backoff, then succeeds', async () => {
    const { client, sleeps, fake } = await setup(script({ caller: 'dev:t2', fault: '529', times: 2 }, { caller: 'dev:t2', text: 'ok' }));
    const chunks: StreamChunk[] = [];
    const res = await client.complete(request(), { onChunk: (c) => chunks.push(c) });
    expect(res.content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(fake.requests).toHaveLength(3);
    expect(sleeps).toEqual([375, 750]);
    expect(chunks.filter((c) => c.kind === 'status')).toHaveLength(2);
  });

  it('gives up on a 529 that never ends with LLM_OVERLOADED after a bounded number of tries', async () => {
    const { client, fake } = await setup(script({ caller: 'dev:t2', fault: '529', times: 50 }), 3);
    const e = await failure(client.complete(request()));
    expect(e.code).toBe('LLM_OVERLOADED');
    expect(e.message).toContain('gave up after 4 attempts');
    expect(fake.requests).toHaveLength(4);
  });

  it('retries a stream cut mid tool input as a whole call', async () => {
    const input = { path: 'src/a.ts', content: 'export const a = 1;\n' };
    const { client, fake } = await setup(
      script(
        { caller: 'dev:t2', toolCalls: [{ name: 'write_file', input }], fault: 'cut_tool_input' },
        { caller: 'dev:t2', toolCalls: [{ name: 'write_file', input }] },
      ),
    );
    const res = await client.complete(request());
    expect(fake.requests).toHaveLength(2);
    expect(res.content).toEqual([{ type: 'tool_use', id: 'toolu_dev_t2_2', name: 'write_file', input }]);
  });

  it('retries a stream cut mid text', async () => {
    const { client, fake } = await setup(
      script({ caller: 'dev:t2', text: 'a long reply that is cut', fault: 'cut_stream' }, { caller: 'dev:t2', text: 'whole reply' }),
    );
    const res = await client.complete(request());
    expect(res.content).toEqual([{ type: 'text', text: 'whole reply' }]);
    expect(fake.requests).toHaveLength(2);
  });

  it('fails a 401 at once with LLM_AUTH naming ANTHROPIC_API_KEY, without retrying', async () => {
    const { client, fake, sleeps } = await setup(script({ caller: 'dev:t2', fault: '401' }, { caller: 'dev:t2', text: 'never' }));
    const e = await failure(client.complete(request()));
    expect(e.code).toBe('LLM_AUTH');
    expect(e.hint).toContain('ANTHROPIC_API_KEY');
    expect(fake.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('reports a non-JSON body as LLM_BAD_RESPONSE, not a crash', async () => {
    const { client } = await setup(script({ caller: 'dev:t2', fault: 'garbage_body' }));
    const e = await failure(client.complete(request()));
    expect(e.code).toBe('LLM_BAD_RESPONSE');
  });

  it('retries malformed tool JSON and surfaces LLM_BAD_RESPONSE when it persists', async () => {
    const { client, fake } = await setup(script({ caller: 'dev:t2', toolCalls: [{ name: 'read_file', input: { path: 'x' } }], fault: 'malformed_tool_json', times: 3 }), 2);
    const e = await failure(client.complete(request()));
    expect(e.code).toBe('LLM_BAD_RESPONSE');
    expect(e.message).toContain('read_file');
    expect(fake.requests).toHaveLength(3);
  });

  it('surfaces a max_tokens stop reason', async () => {
    const { client } = await setup(script({ caller: 'dev:t2', text: 'truncated', stopReason: 'max_tokens' }));
    const res = await client.complete(request());
    expect(res.stopReason).toBe('max_tokens');
  });

  it('surfaces an empty reply as an empty message', async () => {
    const { client } = await setup(script({ caller: 'dev:t2', text: 'ignored', fault: 'empty' }));
    const res = await client.complete(request());
    expect(res.content).toEqual([]);
    expect(res.stopReason).toBe('end_turn');
  });

  it('puts cache breakpoints on tools, system, the stable and the last message, and reads the cache on the second call', async () => {
    const { client, fake } = await setup(script({ caller: 'dev:t2', text: 'one' }, { caller: 'dev:t2', text: 'two' }));
    const first = await client.complete(request());
    const second = await client.complete(
      request({
        messages: [
          { role: 'user', content: 'Task t2: add a --json flag to the export command.' },
          { role: 'assistant', content: [{ type: 'text', text: 'one' }] },
          { role: 'user', content: 'continue' },
        ],
      }),
    );
    expect(first.usage.cacheReadTokens).toBe(0);
    expect(first.usage.cacheWriteTokens).toBeGreaterThan(0);
    expect(second.usage.cacheReadTokens).toBe(first.usage.cacheWriteTokens);
    // The new turn is written for the next call to read, not sent uncached.
    expect(second.usage.cacheWriteTokens).toBeGreaterThan(0);
    const body = fake.requests[0]!.body as { tools: { cache_control?: unknown }[]; system: { cache_control?: unknown }[]; messages: { content: { cache_control?: unknown }[] }[] };
    const secondBody = fake.requests[1]!.body as { messages: { content: { cache_control?: unknown }[] }[] };
    expect(secondBody.messages.map((m) => m.content.at(-1)?.cache_control !== undefined)).toEqual([true, false, true]);
    expect(body.tools.map((t) => t.cache_control !== undefined)).toEqual([false, true]);
    expect(body.system[0]?.cache_control).toEqual({ type: 'ephemeral' });
    expect(body.messages[0]?.content[0]?.cache_control).toEqual({ type: 'ephemeral' });
    expect(fake.requests[1]?.cacheReadTokens).toBe(second.usage.cacheReadTokens);
  });

  it('names the caller when the script has no turn left', async () => {
    const { client, fake } = await setup(script({ caller: 'pm', text: 'plan' }));
    const e = await failure(client.complete(request()));
    // A plain 400 to the client, which knows nothing of scripts; the server lists it for the test.
    expect(e.code).toBe('LLM_BAD_REQUEST');
    expect(e.message).toContain('"dev:t2"');
    expect(fake.violations).toEqual([expect.stringMatching(/^request 1: .*"dev:t2"/)]);
  });

  it('refuses to start without an API key and says how to run offline', () => {
    let caught: unknown;
    try {
      new AnthropicClient({ env: {} });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(AciaError);
    expect((caught as AciaError).code).toBe('LLM_AUTH');
    expect((caught as AciaError).hint).toContain('scripted:');
  });

  it('turns an abort into ABORTED', async () => {
    const { client } = await setup(script({ caller: 'dev:t2', text: 'slow reply here', latencyMs: 400 }));
    const ac = new AbortController();
    const p = client.complete(request(), { signal: ac.signal, onChunk: (c) => c.kind === 'token' && ac.abort() });
    const e = await failure(p);
    expect(e.code).toBe('ABORTED');
  });
});
