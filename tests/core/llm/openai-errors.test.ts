// Wire shapes the fake server does not produce (in-stream error chunks, a body that ends without a
// finish_reason, hostile chunk shapes, other error bodies), served through the injected fetch to the
// real `openai` SDK.
import { describe, expect, it } from 'vitest';
import { OpenAiCompatibleClient } from '../../../src/core/llm/openai-client.js';
import type { LlmRequest } from '../../../src/core/llm/types.js';
import { failure } from '../../helpers/failure.js';

const request: LlmRequest = { model: 'llama3', system: 's', tools: [], messages: [{ role: 'user', content: 'hi' }], maxTokens: 64, caller: 'pm' };

/** An injected fetch that answers every call with the given responses in turn. */
function cannedFetch(...responses: (() => Response)[]): { fetch: typeof fetch; calls: () => number } {
  let n = 0;
  return {
    fetch: () => Promise.resolve((responses[Math.min(n++, responses.length - 1)] ?? (() => new Response('', { status: 500 })))()),
    calls: () => n,
  };
}

const sse = (...data: string[]) => () =>
  new Response(data.map((d) => `data: ${d}\n\n`).join(''), { status: 200, headers: { 'content-type': 'text/event-stream' } });
const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'llama3', choices: [{ index: 0, delta, finish_reason: finish }] });
const OK = [chunk({ role: 'assistant', content: 'hi' }), chunk({}, 'stop'), '[DONE]'];
const errorBody = (status: number, body: string, type = 'application/json') => () => new Response(body, { status, headers: { 'content-type': type } });

function client(f: typeof fetch, maxRetries = 2): OpenAiCompatibleClient {
  return new OpenAiCompatibleClient({ baseURL: 'http://127.0.0.1:9/v1', env: {}, fetch: f, maxRetries, sleep: () => Promise.resolve() });
}

describe('OpenAiCompatibleClient error mapping', () => {
  it('retries a rate-limit error chunk inside a 200 stream', async () => {
    const f = cannedFetch(sse(JSON.stringify({ error: { type: 'rate_limit_error', message: 'slow down' } })), sse(...OK));
    expect((await client(f.fetch).complete(request)).content).toEqual([{ type: 'text', text: 'hi' }]);
    expect(f.calls()).toBe(2);
  });

  it('treats a body that ends cleanly before any finish_reason as a cut stream', async () => {
    const f = cannedFetch(sse(chunk({ content: 'half' })));
    const e = await failure(client(f.fetch, 1).complete(request));
    expect(e.code).toBe('LLM_STREAM_CUT');
    expect(e.message).toContain('ended before a finish_reason');
    expect(f.calls()).toBe(2);
  });

  it('accepts a finish_reason without [DONE] from lenient local servers', async () => {
    const f = cannedFetch(sse(chunk({ content: 'hi' }, 'stop')));
    const res = await client(f.fetch).complete(request);
    expect([res.content, res.stopReason, res.usage]).toEqual([[{ type: 'text', text: 'hi' }], 'end_turn', { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }]);
  });

  it('fails a chunk that is not JSON, or not an object, with LLM_BAD_RESPONSE and no retry', async () => {
    for (const bad of ['{"choices": [', '42']) {
      const f = cannedFetch(sse(bad), sse(...OK));
      expect((await failure(client(f.fetch).complete(request))).code).toBe('LLM_BAD_RESPONSE');
      expect(f.calls()).toBe(1);
    }
  });

  it('ignores fields of the wrong type instead of crashing on them', async () => {
    const f = cannedFetch(
      sse(
        JSON.stringify({ choices: 'x', usage: { prompt_tokens: 'many', completion_tokens: -3 } }),
        JSON.stringify({ choices: [{ delta: { content: 7, tool_calls: 5 } }] }),
        JSON.stringify({ choices: [{ delta: { tool_calls: [null, { index: 0, id: 'c1', function: { name: 'run', arguments: '{"a":' } }] } }] }),
        JSON.stringify({ choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: '1}' } }] }, finish_reason: 'tool_calls' }] }),
        JSON.stringify({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 2, prompt_tokens_details: null } }),
      ),
    );
    const res = await client(f.fetch).complete(request);
    expect(res.content).toEqual([{ type: 'tool_use', id: 'c1', name: 'run', input: { a: 1 } }]);
    expect(res.stopReason).toBe('tool_use');
    expect(res.usage).toEqual({ inputTokens: 10, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 });
  });

  it('maps error statuses through the shared table, with the server message', async () => {
    const cases: [() => Response, string, RegExp][] = [
      [errorBody(400, JSON.stringify({ error: { message: "This model's maximum context length is 8192 tokens", type: 'invalid_request_error' } })), 'LLM_CONTEXT_LENGTH', /maximum context length/],
      [errorBody(400, JSON.stringify({ error: { message: 'tools[0]: bad schema' } })), 'LLM_BAD_REQUEST', /rejected the request \(400\): tools\[0\]: bad schema$/],
      [errorBody(403, JSON.stringify({ error: 'key revoked' })), 'LLM_AUTH', /rejected the credentials \(403\): key revoked$/],
      [errorBody(404, JSON.stringify({ error: 'model "llama9" not found, try pulling it first' })), 'LLM_BAD_REQUEST', /\(404\): model "llama9" not found/],
    ];
    for (const [response, code, message] of cases) {
      const f = cannedFetch(response);
      const e = await failure(client(f.fetch).complete(request));
      expect([e.code, f.calls()]).toEqual([code, 1]);
      expect(e.message).toMatch(message);
    }
  });

  it('retries a 502 with an HTML body and reports the head of it', async () => {
    const f = cannedFetch(errorBody(502, '<html>bad gateway</html>', 'text/html'));
    const e = await failure(client(f.fetch, 1).complete(request));
    expect(e.code).toBe('LLM_SERVER');
    expect(e.message).toMatch(/server error \(502\): <html>bad gateway<\/html> \(gave up after 2 attempts\)$/);
    expect(f.calls()).toBe(2);
  });

  it('rejects a 200 that is not an event stream (a server that ignored stream: true)', async () => {
    const f = cannedFetch(errorBody(200, JSON.stringify({ choices: [{ message: { content: 'hi' } }] })));
    const e = await failure(client(f.fetch).complete(request));
    expect(e.code).toBe('LLM_BAD_RESPONSE');
    expect(e.message).toBe('http://127.0.0.1:9/v1 answered with "application/json" instead of an event stream');
    expect(e.hint).toContain('OPENAI_BASE_URL');
    expect(f.calls()).toBe(1);
  });
});
