// The metering proxy on the OpenAI Responses API (Codex) and the Gemini API (Gemini CLI): what it lets an
// agent send upstream with the user's key, and how it reads usage back from each API's replies, checked
// against the fake server's wires of those APIs and through a real proxy with a budget gate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseScript } from '../../src/core/llm/script.js';
import { startFakeAnthropicServer, type FakeServer } from '../../src/core/llm/fake-server.js';
import type { Usage } from '../../src/core/llm/types.js';
import { isRefusal, type ProxyPolicy, type VettedRequest, type Refusal } from '../../src/team/agents-acp/proxy-common.js';
import { meterOpenAi, vetOpenAi } from '../../src/team/agents-acp/proxy-openai.js';
import { meterGemini, vetGemini } from '../../src/team/agents-acp/proxy-gemini.js';
import { startMeteringProxy } from '../../src/team/agents-acp/metering-proxy.js';
import { budgetContext, RecordingGate } from './budget-rig.js';
import { startRecordingUpstream } from '../helpers/recording-upstream.js';

const TOKEN = 'acia-task-0123456789abcdef0123456789abcdef';
const policy: ProxyPolicy = { token: TOKEN, allowBetas: [], allowServerTools: false };
const allowed: ProxyPolicy = { ...policy, allowServerTools: true };
const buf = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));
const status = (v: VettedRequest | Refusal) => (isRefusal(v) ? v.status : 200);
const ok = (v: VettedRequest | Refusal): VettedRequest => {
  if (isRefusal(v)) throw new Error(`refused: ${v.message}`);
  return v;
};

describe('the proxy on the OpenAI Responses API', () => {
  const call = { model: 'gpt-5.5', input: 'hi', stream: true, tools: [{ type: 'function', name: 'exec_command', parameters: {} }, { type: 'custom', name: 'apply_patch' }, { type: 'tool_search', execution: 'client' }] };
  const vet = (method: string, url: string, body: unknown = call, headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }, p = policy) => vetOpenAi(method, url, headers, buf(body), p, 4096);

  it('serves POST /v1/responses to the holder of the token (a Bearer key), nothing else', () => {
    expect(status(vet('POST', '/v1/responses'))).toBe(200);
    expect(ok(vet('POST', '/v1/./responses?x=1')).path).toBe('responses');
    expect(status(vet('POST', '/v1/responses', call, {}))).toBe(401);
    expect(status(vet('POST', '/v1/responses', call, { authorization: 'Bearer sk-guess' }))).toBe(401);
    expect(status(vet('POST', '/v1/responses', call, { 'x-api-key': TOKEN }))).toBe(401);
    for (const [m, u] of [['GET', '/v1/models'], ['POST', '/v1/files'], ['POST', '/v1/responses/compact'], ['POST', '/v1/responses/../files'], ['POST', '/v1/chat/completions'], ['POST', '//evil.example/v1/responses'], ['GET', '/v1/responses']] as const) {
      expect(status(vet(m, u)), `${m} ${u}`).toBe(404);
    }
  });

  it('refuses tools OpenAI runs and fields that reach into the account, unless the config allows them', () => {
    for (const t of [{ type: 'web_search' }, { type: 'web_search_preview' }, { type: 'file_search' }, { type: 'code_interpreter' }, { type: 'image_generation' }, { type: 'mcp', server_url: 'https://evil.example' }, { type: 'tool_search' }]) {
      const v = vet('POST', '/v1/responses', { ...call, tools: [t] });
      expect(status(v), t.type).toBe(400);
      expect(isRefusal(v) && v.message).toMatch(/meteringProxy\.allowServerTools/);
      expect(status(vet('POST', '/v1/responses', { ...call, tools: [t] }, undefined, allowed)), t.type).toBe(200);
    }
    for (const [field, value] of [['previous_response_id', 'resp_someone_elses'], ['conversation', 'conv_1'], ['prompt', { id: 'pmpt_1' }], ['background', true]] as const) {
      expect(status(vet('POST', '/v1/responses', { ...call, [field]: value })), field).toBe(400);
    }
    expect(status(vet('POST', '/v1/responses', { ...call, background: false, previous_response_id: null }))).toBe(200);
    expect(status(vet('POST', '/v1/responses', 'not json'))).toBe(400);
  });

  it('gives a call without an output limit the run’s per-call one, and reserves what it can cost', () => {
    const capped = ok(vet('POST', '/v1/responses'));
    expect(capped.body.max_output_tokens).toBe(4096);
    expect(capped.maxOutputTokens).toBe(4096);
    const own = ok(vet('POST', '/v1/responses', { ...call, max_output_tokens: 100 }));
    expect(own.body.max_output_tokens).toBe(100);
    expect(own.maxOutputTokens).toBe(100);
    expect(own.headers).toEqual({});
    expect(ok(vet('POST', '/v1/responses', call, { authorization: `Bearer ${TOKEN}`, accept: 'text/event-stream', 'x-codex-turn-metadata': '{}' })).headers).toEqual({ accept: 'text/event-stream' });
  });
});

describe('the proxy on the Gemini API', () => {
  const call = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], tools: [{ functionDeclarations: [{ name: 'write_file' }] }], generationConfig: { thinkingConfig: { thinkingBudget: 1000 } } };
  const vet = (method: string, url: string, body: unknown = call, headers: Record<string, string> = { 'x-goog-api-key': TOKEN }, p = policy) => vetGemini(method, url, headers, buf(body), p, 4096);

  it('serves generateContent, streamGenerateContent and countTokens of a model to the holder of the token', () => {
    const v = ok(vet('POST', '/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key=whatever'));
    expect(v.path).toBe('v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse');
    expect(v.model).toBe('gemini-2.5-pro');
    expect(v.metered).toBe(true);
    expect(ok(vet('POST', '/v1beta/models/gemini-2.5-pro:countTokens')).metered).toBe(false);
    // The key in the query is accepted from the agent and never forwarded.
    expect(ok(vet('POST', `/v1beta/models/gemini-2.5-pro:generateContent?key=${TOKEN}`, call, {})).path).toBe('v1beta/models/gemini-2.5-pro:generateContent');
    expect(status(vet('POST', '/v1beta/models/gemini-2.5-pro:generateContent', call, {}))).toBe(401);
    expect(status(vet('POST', '/v1beta/models/gemini-2.5-pro:generateContent', call, { 'x-goog-api-key': 'AIza-guess' }))).toBe(401);
    for (const [m, u] of [['GET', '/v1beta/models'], ['POST', '/v1beta/files'], ['POST', '/v1beta/cachedContents'], ['POST', '/v1beta/models/gemini-2.5-pro:batchGenerateContent'], ['POST', '/v1beta/models/..%2ffiles:generateContent'], ['POST', '/upload/v1beta/files'], ['GET', '/v1beta/models/gemini-2.5-pro:generateContent']] as const) {
      expect(status(vet(m, u)), `${m} ${u}`).toBe(404);
    }
  });

  it('refuses tools Google runs and a cached context of the user’s, unless the config allows them', () => {
    for (const t of [{ googleSearch: {} }, { googleSearchRetrieval: {} }, { codeExecution: {} }, { urlContext: {} }, { fileSearch: {} }, { googleMaps: {} }, { functionDeclarations: [], googleSearch: {} }]) {
      const v = vet('POST', '/v1beta/models/gemini-2.5-pro:generateContent', { ...call, tools: [t] });
      expect(status(v), JSON.stringify(t)).toBe(400);
      expect(isRefusal(v) && v.message).toMatch(/meteringProxy\.allowServerTools/);
      expect(status(vet('POST', '/v1beta/models/gemini-2.5-pro:generateContent', { ...call, tools: [t] }, undefined, allowed))).toBe(200);
    }
    expect(status(vet('POST', '/v1beta/models/gemini-2.5-pro:generateContent', { ...call, cachedContent: 'cachedContents/abc' }))).toBe(400);
  });

  it('gives a call without an output limit the run’s per-call one; a thinking budget counts on top in the reservation', () => {
    const v = ok(vet('POST', '/v1beta/models/gemini-2.5-pro:generateContent'));
    expect((v.body.generationConfig as { maxOutputTokens: number }).maxOutputTokens).toBe(4096);
    expect(v.maxOutputTokens).toBe(4096 + 1000);
    const own = ok(vet('POST', '/v1beta/models/gemini-2.5-pro:generateContent', { ...call, generationConfig: { maxOutputTokens: 50 } }));
    expect(own.maxOutputTokens).toBe(50);
    expect(own.headers).toEqual({});
  });
});

describe('usage as each API’s replies give it, from the fake server’s wires', () => {
  let server: FakeServer;
  beforeAll(async () => {
    const turns = [
      ...['stream', 'whole'].map(() => ({ caller: 'acp:codex:*', text: 'done', toolCalls: [{ name: 'apply_patch', input: { input: '*** Begin Patch\n*** End Patch\n' } }, { name: 'exec_command', input: { cmd: 'ls' } }], usage: { inputTokens: 900, outputTokens: 40 } })),
      ...['sse', 'array', 'whole'].map(() => ({ caller: 'acp:gemini:*', text: 'done', toolCalls: [{ name: 'write_file', input: { file_path: 'a', content: 'b' } }], usage: { inputTokens: 700, outputTokens: 30 } })),
    ];
    server = await startFakeAnthropicServer({ script: parseScript({ version: 1, turns }) });
  });
  afterAll(async () => {
    await server?.close();
  });
  const post = async (path: string, caller: string, body: unknown) => {
    const r = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-acia-caller': caller }, body: JSON.stringify(body) });
    return { text: await r.text(), streamed: (r.headers.get('content-type') ?? '').includes('event-stream') };
  };

  it('the Responses API: response.completed, or the response object; a custom tool gets a freeform call', async () => {
    const body = (stream: boolean) => ({ model: 'gpt-5.5', stream, input: [{ role: 'user', content: 'x' }], tools: [{ type: 'custom', name: 'apply_patch' }, { type: 'function', name: 'exec_command', parameters: {} }] });
    const streamed = await post('/v1/responses', 'acp:codex:gpt-5.5', body(true));
    expect(streamed.streamed).toBe(true);
    expect(streamed.text).toContain('"type":"custom_tool_call"');
    expect(streamed.text).toContain('"input":"*** Begin Patch');
    expect(streamed.text).toContain('"type":"function_call"');
    expect(meterOpenAi(streamed.text, true)).toEqual({ usage: { inputTokens: 900, outputTokens: 40, cacheReadTokens: 0, cacheWriteTokens: 0 }, stopReason: 'completed', model: 'gpt-5.5' });
    const whole = await post('/v1/responses', 'acp:codex:gpt-5.5', body(false));
    expect(whole.streamed).toBe(false);
    expect(meterOpenAi(whole.text, false).usage.outputTokens).toBe(40);
  });

  it('the Gemini API: the last usageMetadata of an SSE stream or a chunk array, or of one response', async () => {
    const body = { contents: [{ role: 'user', parts: [{ text: 'x' }] }] };
    const expected = { usage: { inputTokens: 700, outputTokens: 30, cacheReadTokens: 0, cacheWriteTokens: 0 }, stopReason: 'STOP', model: 'gemini-2.5-pro' };
    const sse = await post('/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse', 'acp:gemini:gemini-2.5-pro', body);
    expect(sse.streamed).toBe(true);
    expect(sse.text).toContain('"functionCall":{"name":"write_file"');
    expect(meterGemini(sse.text, true)).toEqual(expected);
    expect(meterGemini((await post('/v1beta/models/gemini-2.5-pro:streamGenerateContent', 'acp:gemini:gemini-2.5-pro', body)).text, false)).toEqual(expected);
    expect(meterGemini((await post('/v1beta/models/gemini-2.5-pro:generateContent', 'acp:gemini:gemini-2.5-pro', body)).text, false)).toEqual(expected);
    expect(server.requests.filter((q) => q.api === 'gemini').map((q) => q.model)).toEqual(['gemini-2.5-pro', 'gemini-2.5-pro', 'gemini-2.5-pro']);
  });
});

describe('a real proxy on the Gemini API with a budget gate', () => {
  it('reserves the worst case, settles at the reply’s usage, and forwards nothing it refused', async () => {
    const server = await startFakeAnthropicServer({ script: parseScript({ version: 1, turns: [{ caller: 'acp:gemini:*', text: 'hello', usage: { inputTokens: 100, outputTokens: 50 } }] }) });
    const upstream = await startRecordingUpstream(server.url);
    const gate = new RecordingGate();
    const ctx = budgetContext({ runId: 'run-g', gate, config: { budget: { maxTokens: 50_000 }, maxTokensPerCall: 1000 }, model: { costUsd: (_m: string, u: Usage) => (u.inputTokens + u.outputTokens) / 1_000_000 } });
    const proxy = await startMeteringProxy(ctx, { api: 'gemini', actor: 'dev:t1', taskId: 't1', upstream: upstream.url, apiKey: 'AIza-users-key', callerPrefix: 'acp:gemini:', tcp: true, allow: { allowBetas: [], allowServerTools: false } });
    try {
      const body = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
      const post = (key: string) => fetch(`${proxy.url ?? ''}/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': key }, body });
      expect((await post(proxy.token)).status).toBe(200);
      // The body as forwarded carries the cap ACIA added; the reservation is its input plus that cap.
      const forwarded = JSON.stringify(server.requests[0]!.body);
      await expect.poll(() => gate.log, { timeout: 10_000 }).toEqual([`reserve run-g ${Math.ceil(forwarded.length / 4) + 1000} enforce`, `settle r1 ${150 / 1_000_000} 150`]);
      // Upstream it carries the user's key, in the header, and the stream format only in the query.
      expect(upstream.requests.map((q) => [q.path, q.headers['x-goog-api-key']])).toEqual([['/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse', 'AIza-users-key']]);
      expect((await post('AIza-guess')).status).toBe(401);
      expect(proxy.tokenRefusals()).toBe(1);
      // A keyless probe is refused but is not an agent that failed to present its key.
      expect((await fetch(`${proxy.url ?? ''}/`, { method: 'HEAD' })).status).toBe(401);
      expect(proxy.tokenRefusals()).toBe(1);
      gate.refusal = { limit: 'tokens', spent: 60_000, max: 50_000 };
      const refused = await post(proxy.token);
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: { status: string } }).error.status).toBe('INVALID_ARGUMENT');
      expect(server.requests).toHaveLength(1);
    } finally {
      await proxy.close();
      await upstream.close();
      await server.close();
    }
  });
});
