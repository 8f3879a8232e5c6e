import { afterEach, describe, expect, it } from 'vitest';
import type { StreamChunk } from '../../../src/core/acm/contracts.js';
import { startFakeAnthropicServer, type FakeServer } from '../../../src/core/llm/fake-server.js';
import { OpenAiCompatibleClient } from '../../../src/core/llm/openai-client.js';
import type { Script, ScriptTurn } from '../../../src/core/llm/script.js';
import type { LlmRequest } from '../../../src/core/llm/types.js';
import { failure } from '../../helpers/failure.js';

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(turns: ScriptTurn[], maxRetries = 4): Promise<{ client: OpenAiCompatibleClient; sleeps: number[]; fake: FakeServer }> {
  const script: Script = { version: 1, turns };
  const fake = await startFakeAnthropicServer({ script, host: '127.0.0.1', port: 0 });
  server = fake;
  const sleeps: number[] = [];
  const client = new OpenAiCompatibleClient({
    baseURL: `${fake.url}/v1`,
    env: {},
    maxRetries,
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
    retry: { random: () => 0.5 },
  });
  return { client, sleeps, fake };
}

const request: LlmRequest = {
  model: 'qwen3-coder',
  system: 'You are QA.',
  tools: [{ name: 'run_tests', description: 'Run the tests', inputSchema: { type: 'object', properties: { filter: { type: 'string' } } } }],
  messages: [
    { role: 'user', content: 'Verify task t3.' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'call_prev', name: 'run_tests', input: {} }] },
    { role: 'user', content: [{ type: 'tool_result', toolUseId: 'call_prev', content: '3 passed' }] },
  ],
  maxTokens: 512,
  caller: 'qa:t3',
};

describe('OpenAiCompatibleClient through the fake server', () => {
  it('streams text and maps tool results to tool messages', async () => {
    const { client, fake } = await setup([{ caller: 'qa:t3', text: 'All tests pass.' }]);
    const chunks: StreamChunk[] = [];
    const res = await client.complete(request, { onChunk: (c) => chunks.push(c) });
    expect(res.content).toEqual([{ type: 'text', text: 'All tests pass.' }]);
    expect(res.stopReason).toBe('end_turn');
    expect(chunks.filter((c) => c.kind === 'token').length).toBeGreaterThan(1);
    const body = fake.requests[0]!.body as { messages: { role: string; tool_call_id?: string }[] };
    expect(body.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(body.messages[3]?.tool_call_id).toBe('call_prev');
    expect(fake.requests[0]?.headers['authorization']).toBeUndefined();
    expect(res.usage.outputTokens).toBeGreaterThan(0);
  });

  it('assembles tool-call arguments that arrive in pieces', async () => {
    const input = { filter: 'export --json', verbose: true };
    const { client } = await setup([{ caller: 'qa:t3', toolCalls: [{ name: 'run_tests', input }] }]);
    const chunks: StreamChunk[] = [];
    const res = await client.complete(request, { onChunk: (c) => chunks.push(c) });
    expect(res.stopReason).toBe('tool_use');
    expect(res.content).toEqual([{ type: 'tool_use', id: 'toolu_qa_t3_1', name: 'run_tests', input }]);
    expect(chunks.filter((c) => c.kind === 'json_partial').length).toBeGreaterThan(1);
  });

  it('retries 429 honouring retry-after and 529 with backoff', async () => {
    const { client, sleeps, fake } = await setup([
      { caller: 'qa:t3', fault: '429', retryAfterS: 2 },
      { caller: 'qa:t3', fault: '529' },
      { caller: 'qa:t3', text: 'ok' },
    ]);
    const res = await client.complete(request);
    expect(res.content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(sleeps).toEqual([2000, 750]);
    expect(fake.requests).toHaveLength(3);
  });

  it('gives up on endless 500s with LLM_SERVER after a bounded number of tries', async () => {
    const { client, fake } = await setup([{ caller: 'qa:t3', fault: '500', times: 20 }], 2);
    const e = await failure(client.complete(request));
    expect(e.code).toBe('LLM_SERVER');
    expect(fake.requests).toHaveLength(3);
  });

  it('retries a stream cut mid tool arguments', async () => {
    const input = { filter: 'a' };
    const { client, fake } = await setup([
      { caller: 'qa:t3', toolCalls: [{ name: 'run_tests', input }], fault: 'cut_tool_input' },
      { caller: 'qa:t3', toolCalls: [{ name: 'run_tests', input }] },
    ]);
    const res = await client.complete(request);
    expect(res.content[0]).toMatchObject({ type: 'tool_use', input });
    expect(fake.requests).toHaveLength(2);
  });

  it('fails a 401 at once with LLM_AUTH naming OPENAI_API_KEY', async () => {
    const { client, fake } = await setup([{ caller: 'qa:t3', fault: '401' }]);
    const e = await failure(client.complete(request));
    expect(e.code).toBe('LLM_AUTH');
    expect(e.hint).toContain('OPENAI_API_KEY');
    expect(fake.requests).toHaveLength(1);
  });

  it('reports a non-JSON body as LLM_BAD_RESPONSE', async () => {
    const { client } = await setup([{ caller: 'qa:t3', fault: 'garbage_body' }]);
    expect((await failure(client.complete(request))).code).toBe('LLM_BAD_RESPONSE');
  });

  it('surfaces length as max_tokens', async () => {
    const { client } = await setup([{ caller: 'qa:t3', text: 'cut', stopReason: 'max_tokens' }]);
    expect((await client.complete(request)).stopReason).toBe('max_tokens');
  });

  it('sends the bearer key when one is configured, through the injected fetch', async () => {
    const { fake } = await setup([{ caller: 'qa:t3', text: 'ok' }]);
    const seen: Record<string, string>[] = [];
    const spyFetch: typeof fetch = (input, init) => {
      seen.push({ ...(init?.headers as Record<string, string>) });
      return fetch(input, init);
    };
    const client = new OpenAiCompatibleClient({ baseURL: `${fake.url}/v1`, env: { OPENAI_API_KEY: 'sk-local' }, fetch: spyFetch });
    await client.complete(request);
    expect(seen[0]?.['authorization']).toBe('Bearer sk-local');
    expect(fake.requests[0]?.headers['authorization']).toBeUndefined();
    expect(fake.requests[0]?.headers['x-acia-caller']).toBe('qa:t3');
  });
});
