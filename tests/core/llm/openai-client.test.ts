import { afterEach, describe, expect, it } from 'vitest';
import { noWait } from './no-wait.js';
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
  const { sleeps, sleep, retry } = noWait();
  const client = new OpenAiCompatibleClient({ baseURL: `${fake.url}/v1`, env: {}, maxRetries, sleep, retry });
  return { client, sleeps, fake };
}

/** A fetch that records the headers the SDK sends, then really sends them. */
function headerSpy(): { fetch: typeof fetch; seen: Record<string, string>[] } {
  const seen: Record<string, string>[] = [];
  return {
    seen,
    fetch: (input, init) => {
      seen.push(Object.fromEntries(new Headers(init?.headers).entries()));
      return fetch(input, init);
    },
  };
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
    const { fetch: spyFetch, seen } = headerSpy();
    const client = new OpenAiCompatibleClient({ baseURL: `${fake.url}/v1`, env: { OPENAI_API_KEY: 'sk-local' }, fetch: spyFetch });
    await client.complete(request);
    expect(seen[0]?.['authorization']).toBe('Bearer sk-local');
    expect(fake.requests[0]?.headers['authorization']).toBeUndefined();
    expect(fake.requests[0]?.headers['x-acia-caller']).toBe('qa:t3');
  });
});

describe('OpenAiCompatibleClient on the openai SDK: keys, usage, faults, abort', () => {
  it('sends no Authorization header at all when no key is configured (local servers)', async () => {
    const { fake } = await setup([{ caller: 'qa:t3', text: 'ok' }]);
    const { fetch: spyFetch, seen } = headerSpy();
    const client = new OpenAiCompatibleClient({ baseURL: `${fake.url}/v1`, env: {}, fetch: spyFetch });
    expect((await client.complete(request)).content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(seen).toHaveLength(1);
    expect(Object.keys(seen[0] ?? {})).not.toContain('authorization');
  });

  it('asks for usage in the stream and maps cached prompt tokens to cache reads', async () => {
    const long: LlmRequest = { ...request, system: `You are QA. ${'Check every claim against the tests. '.repeat(200)}` };
    const { client, fake } = await setup([
      { caller: 'qa:t3', text: 'first' },
      { caller: 'qa:t3', text: 'second' },
    ]);
    const first = await client.complete(long);
    const second = await client.complete(long);
    expect(fake.requests[0]?.body['stream_options']).toEqual({ include_usage: true });
    expect(first.usage.cacheReadTokens).toBe(0);
    expect(first.usage.inputTokens).toBe(fake.requests[0]?.estimatedInputTokens);
    // The same prefix again: OpenAI reports it inside prompt_tokens as cached_tokens; ours are disjoint.
    expect(second.usage.cacheReadTokens).toBeGreaterThanOrEqual(1024);
    expect(second.usage.cacheReadTokens).toBe(fake.requests[1]?.cacheReadTokens);
    expect(second.usage.inputTokens).toBe((fake.requests[1]?.estimatedInputTokens ?? 0) - second.usage.cacheReadTokens);
    expect(second.usage.cacheWriteTokens).toBe(0);
    expect(second.usage.outputTokens).toBeGreaterThan(0);
    expect(second.requestId).toBe('req_fake_0002');
    expect(second.model).toBe('qwen3-coder');
  });

  it('retries a 429 once, per the failure table, and says so in a status chunk', async () => {
    const { client, sleeps, fake } = await setup([
      { caller: 'qa:t3', fault: '429' },
      { caller: 'qa:t3', text: 'ok' },
    ]);
    const chunks: StreamChunk[] = [];
    const res = await client.complete(request, { onChunk: (c) => chunks.push(c) });
    expect(res.content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(fake.requests).toHaveLength(2);
    expect(sleeps).toEqual([1000]);
    expect(chunks.filter((c) => c.kind === 'status')).toEqual([expect.objectContaining({ status: 'retrying', message: expect.stringMatching(/^LLM_RATE_LIMITED: .*rate limit \(429\)/) })]);
  });

  it('names the endpoint, the status and the server message on a 401', async () => {
    const { client, sleeps, fake } = await setup([{ caller: 'qa:t3', fault: '401' }]);
    const e = await failure(client.complete(request));
    expect(e.message).toBe(`${fake.url}/v1 rejected the credentials (401): invalid x-api-key`);
    expect(sleeps).toEqual([]);
  });

  it('fails a text stream cut mid-way with LLM_STREAM_CUT once retries are spent', async () => {
    const { client, fake } = await setup([{ caller: 'qa:t3', text: 'The tests pass and the build is green.', fault: 'cut_stream', times: 2 }], 1);
    const chunks: StreamChunk[] = [];
    const e = await failure(client.complete(request, { onChunk: (c) => chunks.push(c) }));
    expect(e.code).toBe('LLM_STREAM_CUT');
    expect(e.message).toMatch(/stream from .* broke: .*\(gave up after 2 attempts\)/);
    expect(chunks.some((c) => c.kind === 'token')).toBe(true);
    expect(chunks.some((c) => c.kind === 'final')).toBe(false);
    expect(fake.requests).toHaveLength(2);
  });

  it('stops a slow stream at once when the caller aborts', async () => {
    // The fake spreads 3 s over 6 events: the first token comes after 1 s, the rest would take 2.5 s more.
    const { client, fake } = await setup([{ caller: 'qa:t3', text: 'word '.repeat(30), latencyMs: 3000 }]);
    const controller = new AbortController();
    let abortedAt = 0;
    const e = await failure(
      client.complete(request, {
        signal: controller.signal,
        onChunk: (c) => {
          if (c.kind !== 'token' || abortedAt !== 0) return;
          abortedAt = Date.now();
          controller.abort();
        },
      }),
    );
    expect(e.code).toBe('ABORTED');
    expect(abortedAt).toBeGreaterThan(0);
    expect(Date.now() - abortedAt).toBeLessThan(1000);
    expect(fake.requests).toHaveLength(1);
  });

  it('sends nothing when the signal is already aborted', async () => {
    const { client, fake } = await setup([{ caller: 'qa:t3', text: 'ok' }]);
    const e = await failure(client.complete(request, { signal: AbortSignal.abort() }));
    expect(e.code).toBe('ABORTED');
    expect(fake.requests).toHaveLength(0);
  });

  it('gives up on headers that do not come within timeoutMs', async () => {
    const { fake } = await setup([{ caller: 'qa:t3', fault: '500', latencyMs: 5000 }]);
    const client = new OpenAiCompatibleClient({ baseURL: `${fake.url}/v1`, env: {}, maxRetries: 0, timeoutMs: 100 });
    const e = await failure(client.complete(request));
    expect(e.code).toBe('LLM_SERVER');
    expect(e.message).toContain('sent no response headers in time');
  });

  it('says which endpoint it cannot reach, and why', async () => {
    const closed = await startFakeAnthropicServer({ script: { version: 1, turns: [] } });
    const url = `${closed.url}/v1`;
    await closed.close();
    const client = new OpenAiCompatibleClient({ baseURL: url, env: {}, maxRetries: 0 });
    const e = await failure(client.complete(request));
    expect(e.code).toBe('LLM_SERVER');
    expect(e.message).toMatch(new RegExp(`^cannot reach ${url.replace(/[.]/g, '\\.')}: .*ECONNREFUSED`));
  });

  it('takes the base URL and key from env when no option names them', async () => {
    const { fake } = await setup([{ caller: 'qa:t3', text: 'ok' }]);
    const { fetch: spyFetch, seen } = headerSpy();
    const client = new OpenAiCompatibleClient({ env: { OPENAI_BASE_URL: `${fake.url}/v1/`, OPENAI_API_KEY: 'sk-env' }, fetch: spyFetch });
    expect(client.baseURL).toBe(`${fake.url}/v1`);
    await client.complete(request);
    expect(seen[0]?.['authorization']).toBe('Bearer sk-env');
    expect(fake.requests[0]?.path).toBe('/v1/chat/completions');
  });
});

describe('OpenAiCompatibleClient endpoint configuration', () => {
  it("sends max_completion_tokens to OpenAI's own API and max_tokens to other servers", async () => {
    const { client, fake } = await setup([
      { caller: 'qa:t3', text: 'local' },
      { caller: 'qa:t3', text: 'official' },
    ]);
    await client.complete(request);
    // The official host, served by the fake: the injected fetch only changes where the bytes go.
    const toFake: typeof fetch = (input, init) => fetch(String(input instanceof Request ? input.url : input).replace('https://api.openai.com', fake.url), init);
    const official = new OpenAiCompatibleClient({ baseURL: 'https://api.openai.com/v1', env: { OPENAI_API_KEY: 'sk-test' }, fetch: toFake });
    expect((await official.complete(request)).content).toEqual([{ type: 'text', text: 'official' }]);
    expect([fake.requests[0]?.body['max_tokens'], fake.requests[0]?.body['max_completion_tokens']]).toEqual([512, undefined]);
    expect([fake.requests[1]?.body['max_tokens'], fake.requests[1]?.body['max_completion_tokens']]).toEqual([undefined, 512]);
    expect(fake.requests.map((r) => r.maxTokens)).toEqual([512, 512]);
  });

  it('refuses a base URL that is not an http(s) URL, before any call', () => {
    for (const baseURL of ['localhost:11434/v1', 'file:///etc/passwd']) {
      expect(() => new OpenAiCompatibleClient({ baseURL, env: {} })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    }
  });
});
