// An external agent's calls through the metering proxy reserve in the shared budget gate as ACIA's own
// do: settled at what the reply says it cost, released when the upstream call fails, and refused (never
// forwarded) when the gate says the run's budget would be passed. Without a gate (a local run), calls made
// at once hold their worst case against each other.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseScript } from '../../src/core/llm/script.js';
import { startFakeAnthropicServer, type FakeServer } from '../../src/core/llm/fake-server.js';
import type { Usage } from '../../src/core/llm/types.js';
import { startMeteringProxy, type MeteringProxy } from '../../src/team/agents-acp/metering-proxy.js';
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
const post = (proxy: MeteringProxy) => fetch(`${proxy.url ?? ''}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': proxy.token }, body });
const options = { actor: 'dev:t1', taskId: 't1', upstream: '', apiKey: 'k', callerPrefix: 'acp:', tcp: true, allow: { allowBetas: [], allowServerTools: false } };

describe('the metering proxy with a shared budget gate', () => {
  it('reserves each call, settles it at the reply’s usage, releases a failed one, and forwards nothing it refused', async () => {
    const gate = new RecordingGate();
    const proxy = await startMeteringProxy(context(gate), { ...options, upstream: server.url });
    try {
      const estimate = Math.ceil(Buffer.byteLength(body) / 4) + 1000;
      expect((await post(proxy)).status).toBe(200);
      await expect.poll(() => gate.log, { timeout: 10_000 }).toEqual([`reserve run-acp ${estimate} enforce`, `settle r1 ${150 / 1_000_000} 150`]);
      expect((await post(proxy)).status).toBe(500);
      await expect.poll(() => gate.log.slice(2), { timeout: 10_000 }).toEqual([`reserve run-acp ${estimate} enforce`, 'release r2']);
      const forwarded = server.requests.length;
      gate.refusal = { limit: 'tokens', spent: 9000, max: 5000 };
      const refused = await post(proxy);
      expect(refused.status).toBe(400);
      expect(proxy.breach()).toEqual({ limit: 'tokens', spent: 9000, max: 5000 });
      expect(server.requests.length).toBe(forwarded);
    } finally {
      await proxy.close();
    }
  });
});

describe('the metering proxy on a local run', () => {
  it('admits twelve calls made at once only as far as their worst cases fit the budget', async () => {
    // An upstream that answers nothing until every call was either forwarded to it or refused by the
    // proxy: all twelve are under way together, whatever the machine's speed.
    const held: ServerResponse[] = [];
    const upstream = createServer((req, res) => {
      req.resume();
      req.on('end', () => held.push(res));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    // 5,000 tokens; each call may cost its input plus 1,000 output tokens: four fit, not twelve.
    const ctx = budgetContext({ runId: 'run-local', config: { budget: { maxTokens: 5000 }, maxTokensPerCall: 1000 }, model: { costUsd: () => 0 } });
    // The run's fold: a recorded call's usage counts from then on.
    ctx.rec.record = ((_actor: string, _type: string, data: { usage: Usage }) => {
      ctx.state.tokens += data.usage.inputTokens + data.usage.outputTokens;
      return Promise.resolve();
    }) as unknown as typeof ctx.rec.record;
    const proxy = await startMeteringProxy(ctx, { ...options, upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` });
    try {
      let refused = 0;
      const calls = Array.from({ length: 12 }, () =>
        post(proxy).then((r) => {
          if (r.status !== 200) refused++;
          return r.status;
        }),
      );
      await expect.poll(() => held.length + refused, { timeout: 20_000 }).toBe(12);
      const reply = JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-5-5', content: [{ type: 'text', text: 'x' }], stop_reason: 'end_turn', usage: { input_tokens: 10, output_tokens: 1000 } });
      for (const res of held) res.writeHead(200, { 'content-type': 'application/json' }).end(reply);
      const statuses = await Promise.all(calls);
      expect(held).toHaveLength(Math.floor(5000 / (Math.ceil(Buffer.byteLength(body) / 4) + 1000)));
      expect(statuses.filter((s) => s === 200)).toHaveLength(held.length);
      expect(proxy.breach()?.limit).toBe('tokens');
      expect(ctx.state.tokens).toBeLessThanOrEqual(5000);
    } finally {
      await proxy.close();
      upstream.closeAllConnections();
      upstream.close();
    }
  });
});

describe('the metering proxy on a run with a USD budget', () => {
  it('refuses a call on a model it cannot price: an agent would name one to spend past it', async () => {
    const priced: Record<string, number> = { 'claude-sonnet-5-5': 1 };
    const ctx = budgetContext({ runId: 'run-usd', config: { budget: { maxCostUsd: 0.01 }, maxTokensPerCall: 1000 }, model: { costUsd: (m: string, u: Usage) => (priced[m] === undefined ? null : ((u.inputTokens + u.outputTokens) * priced[m]) / 1_000_000) } });
    const proxy = await startMeteringProxy(ctx, { ...options, upstream: server.url });
    try {
      const forwarded = server.requests.length;
      const unpriced = await fetch(`${proxy.url ?? ''}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': proxy.token }, body: body.replace('claude-sonnet-5-5', 'claude-opus-4-1') });
      expect(unpriced.status).toBe(400);
      expect(await unpriced.text()).toMatch(/no price for claude-opus-4-1.*prices/);
      expect(server.requests.length).toBe(forwarded);
      expect(proxy.breach()).toBeNull();
    } finally {
      await proxy.close();
    }
  });
});
