import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runAgent, type AgentToolbox, type ToolCall } from '../../src/agents/agent-loop.js';
import type { AssistantBlock, LlmClient, LlmRequest, LlmResponse } from '../../src/core/llm/types.js';
import { AciaError } from '../../src/core/errors.js';

/** A model that replies with the given turns in order and keeps every request it saw. */
function turns(...replies: AssistantBlock[][]): LlmClient & { requests: LlmRequest[] } {
  const requests: LlmRequest[] = [];
  let i = 0;
  return {
    provider: 'test',
    requests,
    complete(req: LlmRequest): Promise<LlmResponse> {
      requests.push(req);
      const content = replies[i++];
      if (!content) return Promise.reject(new Error(`no reply ${i}`));
      return Promise.resolve({
        content,
        stopReason: content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn',
        usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
        model: 'm',
        requestId: null,
      });
    },
  };
}

const call = (id: string, name: string, input: unknown): AssistantBlock => ({ type: 'tool_use', id, name, input });

function toolbox(log: ToolCall[] = [], readOnly = true): AgentToolbox {
  return {
    specs: [{ name: 'read_file', description: 'read', inputSchema: { type: 'object' } }],
    readOnly: () => readOnly,
    invoke: (c) => {
      log.push(c);
      return Promise.resolve({ ok: true, forModel: `contents of ${JSON.stringify(c.input)}`, forDisplay: 'read' });
    },
  };
}

const Out = z.object({ summary: z.string().min(1) });
const base = { model: 'm', caller: 'dev:t1', system: 'sys', task: 'do it', output: Out, maxTurns: 10, maxTokens: 100 };

describe('runAgent', () => {
  it('runs tool calls, feeds results back and ends on a valid return_result', async () => {
    const log: ToolCall[] = [];
    const llm = turns([call('a', 'read_file', { path: 'x' })], [call('b', 'return_result', { summary: 'done' })]);
    const out = await runAgent({ ...base, llm, toolbox: toolbox(log) });
    expect(out).toEqual({ kind: 'returned', result: { summary: 'done' }, turns: 2 });
    expect(log.map((c) => c.name)).toEqual(['read_file']);
    const second = llm.requests[1]!.messages;
    expect(second.at(-1)).toEqual({ role: 'user', content: [{ type: 'tool_result', toolUseId: 'a', content: 'contents of {"path":"x"}' }] });
    expect(llm.requests[0]!.tools.map((t) => t.name)).toEqual(['read_file', 'return_result']);
  });

  it('sends an invalid result back with the zod error, then accepts the repair', async () => {
    const llm = turns([call('a', 'return_result', { summary: '' })], [call('b', 'return_result', { summary: 'fixed' })]);
    const out = await runAgent({ ...base, llm, toolbox: toolbox() });
    expect(out.kind).toBe('returned');
    const repairMsg = llm.requests[1]!.messages.at(-1)!;
    expect(JSON.stringify(repairMsg)).toContain('summary');
    expect(JSON.stringify(repairMsg)).toContain('isError');
  });

  it('stops with protocol_error when the result stays invalid', async () => {
    const bad = () => [call(`r${Math.random()}`, 'return_result', { nope: 1 })];
    const llm = turns(bad(), bad(), bad(), bad(), bad());
    const out = await runAgent({ ...base, llm, toolbox: toolbox() });
    expect(out.kind).toBe('protocol_error');
  });

  it('nudges a reply without tool calls and gives up after repeated ones', async () => {
    const text = (): AssistantBlock[] => [{ type: 'text', text: 'I think it is done.' }];
    const llm = turns(text(), text(), text(), text());
    const out = await runAgent({ ...base, llm, toolbox: toolbox() });
    expect(out.kind).toBe('protocol_error');
    expect(llm.requests[1]!.messages.at(-1)).toEqual({ role: 'user', content: 'Act through tool calls, and finish by calling return_result.' });
  });

  it('detects a loop of identical calls with nothing changed, after a nudge', async () => {
    const same = (i: number) => [call(`c${i}`, 'read_file', { path: 'same' })];
    const llm = turns(same(1), same(2), same(3), same(4), same(5), same(6));
    const out = await runAgent({ ...base, llm, toolbox: toolbox() });
    expect(out.kind).toBe('loop_detected');
    expect(out.turns).toBe(5);
    const third = llm.requests[3]!.messages.at(-1)!;
    expect(JSON.stringify(third)).toContain('exact input several times');
  });

  it('does not call repeated runs a loop when a write happened in between', async () => {
    const replies: AssistantBlock[][] = [];
    for (let i = 0; i < 6; i++) {
      replies.push([call(`w${i}`, 'write_file', { path: 'f', content: String(i) })]);
      replies.push([call(`t${i}`, 'run_tests', {})]);
    }
    replies.push([call('z', 'return_result', { summary: 'ok' })]);
    const llm = turns(...replies);
    const box: AgentToolbox = { ...toolbox(), readOnly: (n) => n === 'run_tests' };
    const out = await runAgent({ ...base, maxTurns: 20, llm, toolbox: box });
    expect(out.kind).toBe('returned');
  });

  it('reports a refusal as its own outcome', async () => {
    const llm: LlmClient = {
      provider: 't',
      complete: () => Promise.resolve({ content: [{ type: 'text', text: 'I cannot help with that.' }], stopReason: 'refusal', usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, model: 'm', requestId: null }),
    };
    const out = await runAgent({ ...base, llm, toolbox: toolbox() });
    expect(out).toMatchObject({ kind: 'refused', message: 'I cannot help with that.' });
  });

  it('stops at maxTurns', async () => {
    const llm = turns(...Array.from({ length: 3 }, (_, i) => [call(`x${i}`, 'read_file', { path: String(i) })]));
    const out = await runAgent({ ...base, maxTurns: 3, llm, toolbox: toolbox() });
    expect(out.kind).toBe('max_turns');
  });

  it('keeps the first message and system prompt when eliding old tool output', async () => {
    const big: AgentToolbox = { ...toolbox(), invoke: () => Promise.resolve({ ok: true, forModel: 'x'.repeat(5000), forDisplay: '' }) };
    const replies = Array.from({ length: 8 }, (_, i) => [call(`b${i}`, 'read_file', { path: String(i) })]);
    replies.push([call('done', 'return_result', { summary: 'ok' })]);
    const llm = turns(...replies);
    const out = await runAgent({ ...base, contextTokens: 4000, llm, toolbox: big });
    expect(out.kind).toBe('returned');
    const last = llm.requests.at(-1)!;
    expect(last.messages[0]).toEqual({ role: 'user', content: 'do it' });
    expect(last.system).toBe('sys');
    expect(JSON.stringify(last.messages)).toContain('elided to save context');
    // the latest tool output is intact
    expect(JSON.stringify(last.messages.at(-1))).toContain('x'.repeat(5000));
  });

  it('wraps a scalar output schema as {result} and unwraps it', async () => {
    const llm = turns([call('a', 'return_result', { result: 42 })]);
    const out = await runAgent({ ...base, output: z.number(), llm, toolbox: toolbox() });
    expect(out).toEqual({ kind: 'returned', result: 42, turns: 1 });
    expect(llm.requests[0]!.tools.at(-1)!.inputSchema).toMatchObject({ type: 'object', required: ['result'] });
  });

  it('throws ABORTED when the signal is aborted', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(runAgent({ ...base, llm: turns(), toolbox: toolbox(), signal: ac.signal })).rejects.toBeInstanceOf(AciaError);
  });
});
