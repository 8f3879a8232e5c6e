import { afterEach, describe, expect, it } from 'vitest';
import { AnthropicClient } from '../../../src/core/llm/anthropic-client.js';
import { toAnthropicParams } from '../../../src/core/llm/anthropic-mapping.js';
import { startFakeAnthropicServer, type FakeServer } from '../../../src/core/llm/fake-server.js';
import { toChatParams } from '../../../src/core/llm/openai-mapping.js';
import { anthropicRequestProblems, openAiRequestProblems } from '../../../src/core/llm/request-invariants.js';
import type { LlmRequest, Message } from '../../../src/core/llm/types.js';
import { failure } from '../../helpers/failure.js';

const conversation: Message[] = [
  { role: 'user', content: 'task' },
  { role: 'assistant', content: [{ type: 'text', text: 'reading' }, { type: 'tool_use', id: 'tu_1', name: 'read_file', input: { path: 'a' } }] },
  { role: 'user', content: [{ type: 'tool_result', toolUseId: 'tu_1', content: 'contents' }] },
];
const tool = { name: 'read_file', description: 'reads', inputSchema: { type: 'object' } };
const req = (over: Partial<LlmRequest> = {}): LlmRequest => ({
  model: 'claude-sonnet-5-5',
  system: 'You are a developer.',
  tools: [tool],
  messages: conversation,
  maxTokens: 64,
  caller: 'dev:t1',
  stableMessageIndex: 0,
  ...over,
});
const anthropicBody = (r: LlmRequest) => toAnthropicParams(r) as unknown as Record<string, unknown>;
const openAiBody = (r: LlmRequest) => toChatParams(r) as unknown as Record<string, unknown>;

describe('request invariants', () => {
  it('accept what the mappings produce for a paired tool conversation', () => {
    expect(anthropicRequestProblems(anthropicBody(req()))).toEqual([]);
    expect(openAiRequestProblems(openAiBody(req()))).toEqual([]);
  });

  it('catch an unfilled placeholder in the system prompt', () => {
    const r = req({ system: 'Do the task.\n{{instructions}}\n' });
    expect(anthropicRequestProblems(anthropicBody(r))).toEqual(['system prompt has an unfilled placeholder {{instructions}}']);
    expect(openAiRequestProblems(openAiBody(r))).toEqual(['system prompt has an unfilled placeholder {{instructions}}']);
  });

  it('catch a tool_use without its result and a result without its call', () => {
    const unanswered = req({ messages: [...conversation.slice(0, 2), { role: 'user', content: 'go on' }] });
    expect(anthropicRequestProblems(anthropicBody(unanswered))).toEqual(['tool_use tu_1 in message 1 has no tool_result in message 2']);
    expect(openAiRequestProblems(openAiBody(unanswered))).toEqual(['tool call tu_1 in message 2 has no tool message after it']);
    const orphan = req({ messages: [conversation[0]!, { role: 'assistant', content: [{ type: 'text', text: 'ok' }] }, conversation[2]!] });
    expect(anthropicRequestProblems(anthropicBody(orphan))).toEqual(['tool_result tu_1 in message 2 answers no tool_use of message 1']);
    expect(openAiRequestProblems(openAiBody(orphan))).toEqual([
      'tool message 3 answers tu_1, which the assistant message before it did not call',
    ]);
  });

  it('catch misplaced and surplus cache breakpoints and duplicate tools', () => {
    const body = anthropicBody(req({ tools: [tool, { ...tool, name: 'list_dir' }] }));
    (body['tools'] as Record<string, unknown>[])[0]!['cache_control'] = { type: 'ephemeral' };
    const first = (body['messages'] as { content: Record<string, unknown>[] }[])[1]!;
    first.content[0]!['cache_control'] = { type: 'ephemeral' };
    expect(anthropicRequestProblems(body)).toEqual([
      'cache breakpoint on tool 0 of 2, not on the last',
      'cache breakpoint inside message 1 (block 0 of 2)',
      '6 cache breakpoints; the API allows 4',
    ]);
    expect(anthropicRequestProblems(anthropicBody(req({ tools: [tool, tool] })))).toContain('tool read_file is defined twice');
  });
});

describe('fake server request checks', () => {
  let server: FakeServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('fail a request that breaks an invariant loudly and list it', async () => {
    server = await startFakeAnthropicServer({ script: { version: 1, turns: [{ caller: 'dev:t1', text: 'never served' }] } });
    const client = new AnthropicClient({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
    const e = await failure(client.complete(req({ system: 'Hi {{name}}' })));
    expect(e.code).toBe('LLM_BAD_REQUEST');
    expect(e.message).toContain('unfilled placeholder {{name}}');
    expect(server.violations).toEqual(['request 1: system prompt has an unfilled placeholder {{name}}']);
    // The turn was not consumed: the script still holds it for a correct request.
    const ok = await client.complete(req());
    expect(ok.content[0]).toMatchObject({ type: 'text', text: 'never served' });
  });
});
