import { afterEach, describe, expect, it } from 'vitest';
import { AnthropicClient } from '../../../src/core/llm/anthropic-client.js';
import { startFakeAnthropicServer, type FakeServer } from '../../../src/core/llm/fake-server.js';
import type { LlmRequest } from '../../../src/core/llm/types.js';

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const req = (caller: string): LlmRequest => ({
  model: 'claude-sonnet-5-5',
  system: 'system prompt '.repeat(20),
  tools: [],
  messages: [{ role: 'user', content: `task for ${caller}` }],
  maxTokens: 64,
  caller,
});

describe('fake Anthropic server', () => {
  it('serves parallel callers from their own queues and records each request without secrets', async () => {
    server = await startFakeAnthropicServer({
      script: {
        version: 1,
        turns: [
          { caller: 'dev:t1', text: 't1 first', latencyMs: 30 },
          { caller: 'dev:t2', text: 't2 first' },
          { caller: 'dev:t1', text: 't1 second' },
          { caller: 'dev:t2', text: 't2 second' },
        ],
      },
    });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const client = new AnthropicClient({ apiKey: 'sk-secret', baseURL: server.url });
    const run = async (caller: string): Promise<string[]> => {
      const out: string[] = [];
      for (let i = 0; i < 2; i++) {
        const r = await client.complete(req(caller));
        out.push(r.content[0]?.type === 'text' ? r.content[0].text : '');
      }
      return out;
    };
    const [t1, t2] = await Promise.all([run('dev:t1'), run('dev:t2')]);
    expect(t1).toEqual(['t1 first', 't1 second']);
    expect(t2).toEqual(['t2 first', 't2 second']);
    expect(server.requests).toHaveLength(4);
    for (const r of server.requests) {
      expect(r.estimatedInputTokens).toBeGreaterThan(60);
      expect(r.stream).toBe(true);
      expect(JSON.stringify(r.headers)).not.toContain('sk-secret');
    }
    expect(server.engine.unconsumed()).toEqual([]);
  });
});
