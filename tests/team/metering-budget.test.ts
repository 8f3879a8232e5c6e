// An external agent's calls through the metering proxy reserve in the shared budget gate as ACIA's own
// do: settled at what the reply says it cost, released when the upstream call fails, and refused (never
// forwarded) when the gate says the run's budget would be passed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseScript } from '../../src/core/llm/script.js';
import { startFakeAnthropicServer, type FakeServer } from '../../src/core/llm/fake-server.js';
import type { Usage } from '../../src/core/llm/types.js';
import { startMeteringProxy } from '../../src/team/agents-acp/metering-proxy.js';
import { budgetContext, RecordingGate } from './budget-rig.js';

let server: FakeServer;
beforeAll(async () => {
  const turns = [
    { caller: 'acp:*', text: 'hello', usage: { inputTokens: 100, outputTokens: 50 } },
    { caller: 'acp:*', fault: '500' },
  ];
  server = await startFakeAnthropicServer({ script: parseScript({ version: 1, model: 'claude-sonnet-5-5', turns }), checkInvariants: false });
});
afterAll(async () => {
  await server?.close();
});

const context = (gate: RecordingGate) =>
  budgetContext({
    runId: 'run-acp',
    gate,
    config: { budget: { maxTokens: 5000 }, maxTokensPerCall: 1000 },
    model: { costUsd: (_model: string, u: Usage) => (u.inputTokens + u.outputTokens) / 1_000_000 },
  });

const body = JSON.stringify({ model: 'claude-sonnet-5-5', max_tokens: 1000, messages: [{ role: 'user', content: 'hi' }] });
const post = (url: string) => fetch(`${url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body });

describe('the metering proxy with a shared budget gate', () => {
  it('reserves each call, settles it at the reply’s usage, releases a failed one, and forwards nothing it refused', async () => {
    const gate = new RecordingGate();
    const proxy = await startMeteringProxy(context(gate), { actor: 'dev:t1', taskId: 't1', upstream: server.url, apiKey: 'k', callerPrefix: 'acp:' });
    try {
      const estimate = Math.ceil(Buffer.byteLength(body) / 4) + 1000;
      expect((await post(proxy.url)).status).toBe(200);
      await expect.poll(() => gate.log).toEqual([`reserve run-acp ${estimate} enforce`, `settle r1 ${150 / 1_000_000} 150`]);
      expect((await post(proxy.url)).status).toBe(500);
      await expect.poll(() => gate.log.slice(2)).toEqual([`reserve run-acp ${estimate} enforce`, 'release r2']);
      const forwarded = server.requests.length;
      gate.refusal = { limit: 'tokens', spent: 9000, max: 5000 };
      const refused = await post(proxy.url);
      expect(refused.status).toBe(400);
      expect(proxy.breach()).toEqual({ limit: 'tokens', spent: 9000, max: 5000 });
      expect(server.requests.length).toBe(forwarded);
    } finally {
      await proxy.close();
    }
  });
});
