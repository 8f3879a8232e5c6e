import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { AnthropicClient } from '../../../src/core/llm/anthropic-client.js';
import { startFakeAnthropicServer, type FakeServer } from '../../../src/core/llm/fake-server.js';
import type { LlmRequest } from '../../../src/core/llm/types.js';
import { failure } from '../../helpers/failure.js';

const request: LlmRequest = { model: 'claude-sonnet-5-5', system: 's', tools: [], messages: [{ role: 'user', content: 'hi' }], maxTokens: 64, caller: 'pm' };

/** An injected fetch that answers every call with the given responses in turn. */
function cannedFetch(...responses: (() => Response)[]): { fetch: typeof fetch; calls: () => number } {
  let n = 0;
  return {
    fetch: () => Promise.resolve((responses[Math.min(n++, responses.length - 1)] ?? (() => new Response('', { status: 500 })))()),
    calls: () => n,
  };
}

const jsonError = (status: number, type: string, message: string) => () =>
  new Response(JSON.stringify({ type: 'error', error: { type, message } }), { status, headers: { 'content-type': 'application/json' } });

function client(f: typeof fetch): AnthropicClient {
  return new AnthropicClient({ apiKey: 'k', baseURL: 'http://127.0.0.1:9', fetch: f, sleep: () => Promise.resolve() });
}

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('AnthropicClient error mapping', () => {
  it('maps "prompt is too long" to LLM_CONTEXT_LENGTH without retrying', async () => {
    const f = cannedFetch(jsonError(400, 'invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum'));
    expect((await failure(client(f.fetch).complete(request))).code).toBe('LLM_CONTEXT_LENGTH');
    expect(f.calls()).toBe(1);
  });

  it('maps other 400s to LLM_BAD_REQUEST and 403 to LLM_AUTH', async () => {
    expect((await failure(client(cannedFetch(jsonError(400, 'invalid_request_error', 'tools.0: bad schema')).fetch).complete(request))).code).toBe('LLM_BAD_REQUEST');
    expect((await failure(client(cannedFetch(jsonError(403, 'permission_error', 'no')).fetch).complete(request))).code).toBe('LLM_AUTH');
  });

  it('rejects a 200 that is not an event stream, naming what came instead, without retrying', async () => {
    const f = cannedFetch(() => new Response('<html>proxy login</html>', { status: 200, headers: { 'content-type': 'text/html' } }));
    const e = await failure(client(f.fetch).complete(request));
    expect(e.code).toBe('LLM_BAD_RESPONSE');
    expect(e.message).toBe('Anthropic endpoint answered with "text/html" instead of an event stream');
    expect(e.hint).toContain('ANTHROPIC_BASE_URL');
    expect(f.calls()).toBe(1);
  });

  it('retries an overloaded error event that arrives inside a 200 stream', async () => {
    const sse = (body: string) => () => new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    const ok = [
      'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"claude-sonnet-5-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}\n\n',
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}\n\n',
      'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}\n\n',
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ].join('');
    const f = cannedFetch(sse('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'), sse(ok));
    const res = await client(f.fetch).complete(request);
    expect(res.content).toEqual([{ type: 'text', text: 'hi' }]);
    expect(f.calls()).toBe(2);
  });

  it('the fake server also answers non-streaming requests from the real SDK', async () => {
    server = await startFakeAnthropicServer({
      script: { version: 1, turns: [{ caller: 'unknown', text: 'plain', toolCalls: [{ name: 'ls', input: { dir: '.' } }] }] },
    });
    const sdk = new Anthropic({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
    const msg = await sdk.messages.create({ model: 'claude-sonnet-5-5', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
    expect(msg.content.map((b) => b.type)).toEqual(['text', 'tool_use']);
    expect(msg.stop_reason).toBe('tool_use');
    expect(server.requests[0]).toMatchObject({ caller: 'unknown', stream: false, model: 'claude-sonnet-5-5' });
  });
});
