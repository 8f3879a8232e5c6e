import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AciaError } from '../../src/core/errors.js';
import { ScriptedClient } from '../../src/core/llm/scripted-client.js';
import type { ScriptTurn } from '../../src/core/llm/script.js';
import { think } from '../../src/agents/think.js';
import type { LlmCallOptions, LlmClient, LlmRequest, LlmResponse } from '../../src/core/llm/types.js';

/** Wraps the scripted model to keep every request, so tests can read what the model was shown. */
function recorded(turns: ScriptTurn[]): { llm: LlmClient; requests: LlmRequest[] } {
  const inner = new ScriptedClient({ version: 1, turns });
  const requests: LlmRequest[] = [];
  return {
    requests,
    llm: {
      provider: 'scripted',
      complete: (req: LlmRequest, opts?: LlmCallOptions): Promise<LlmResponse> => {
        requests.push(structuredClone(req));
        return inner.complete(req, opts);
      },
    },
  };
}

const Summary = z.object({ title: z.string(), risk: z.enum(['low', 'high']) });

describe('think()', () => {
  it('returns a typed object delivered through return_result, whose schema the model sees', async () => {
    const { llm, requests } = recorded([{ caller: 'think', toolCalls: [{ name: 'return_result', input: { title: 'Add --json', risk: 'low' } }] }]);
    const result = await think(Summary).text('Summarise this change:').quote('diff --git a/x b/x', 'diff').run({ llm, model: 'm' });
    expect(result).toEqual({ title: 'Add --json', risk: 'low' });
    const tool = requests[0]?.tools.find((t) => t.name === 'return_result');
    expect(tool?.inputSchema['properties']).toHaveProperty('risk');
    expect(JSON.stringify(requests[0]?.messages[0])).toContain('<diff>');
  });

  it('wraps a non-object schema as {result} and unwraps it', async () => {
    const { llm, requests } = recorded([{ caller: 'c', toolCalls: [{ name: 'return_result', input: { result: 42 } }] }]);
    const n: number = await think(z.number().int()).text('How many files?').run({ llm, model: 'm', caller: 'c' });
    expect(n).toBe(42);
    const schema = requests[0]?.tools.find((t) => t.name === 'return_result')?.inputSchema;
    expect(schema?.['required']).toEqual(['result']);
  });

  it('gives an invalid result one repair round with the zod error', async () => {
    const { llm, requests } = recorded([
      { caller: 'think', toolCalls: [{ name: 'return_result', input: { title: 'x', risk: 'medium' } }] },
      { caller: 'think', toolCalls: [{ name: 'return_result', input: { title: 'x', risk: 'high' } }] },
    ]);
    expect(await think(Summary).text('go').run({ llm, model: 'm' })).toEqual({ title: 'x', risk: 'high' });
    const repair = JSON.stringify(requests[1]?.messages.at(-1));
    expect(repair).toContain('risk');
    expect(repair).toContain('isError');
  });

  it("fails with LLM_PROTOCOL when the result is still invalid after the agent loop's three repairs", async () => {
    const { llm, requests } = recorded([1, 2, 3, 4].map((n) => ({ caller: 'think', toolCalls: [{ name: 'return_result', input: { title: n } }] })));
    const e: unknown = await think(Summary).run({ llm, model: 'm' }).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(AciaError);
    expect((e as AciaError).code).toBe('LLM_PROTOCOL');
    expect((e as AciaError).message).toMatch(/protocol_error: result still invalid after 3 repairs/);
    expect(requests).toHaveLength(4);
  });

  it('calls a tool handler only with validated input, and returns invalid input to the model as a tool error', async () => {
    const seen: { path: string }[] = [];
    const { llm, requests } = recorded([
      { caller: 'think', toolCalls: [{ name: 'read', input: { path: 7 } }] },
      { caller: 'think', toolCalls: [{ name: 'read', input: { path: 'README.md' } }] },
      { caller: 'think', toolCalls: [{ name: 'ghost', input: {} }] },
      { caller: 'think', toolCalls: [{ name: 'return_result', input: { title: 'read it', risk: 'low' } }] },
    ]);
    const result = await think(Summary)
      .text('Read the readme')
      .tool('read', 'Read a file', z.object({ path: z.string() }), (input) => {
        seen.push(input);
        return { content: '# Title' };
      })
      .run({ llm, model: 'm' });
    expect(result.title).toBe('read it');
    expect(seen).toEqual([{ path: 'README.md' }]);
    expect(JSON.stringify(requests[1]?.messages.at(-1))).toContain('Invalid input for read');
    expect(JSON.stringify(requests[2]?.messages.at(-1))).toContain('# Title');
    expect(JSON.stringify(requests[3]?.messages.at(-1))).toContain('Unknown tool');
  });
});
