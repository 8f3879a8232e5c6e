// The chaos model: perturbations inserted before scripted turns, deterministic per seed, never two in a
// row for one caller, and a premature "done" whose skipped turns go to the next agent of that role.
import { describe, expect, it } from 'vitest';
import { CHAOS_KINDS, ChaosClient, parseChaosSpec, type Injection } from '../../../src/core/llm/chaos-client.js';
import { createLlmClient } from '../../../src/core/llm/model-spec.js';
import { ScriptedClient } from '../../../src/core/llm/scripted-client.js';
import type { ScriptTurn } from '../../../src/core/llm/script.js';
import type { LlmRequest, LlmResponse } from '../../../src/core/llm/types.js';
import { AciaError } from '../../../src/core/errors.js';

const request = (caller: string): LlmRequest => ({ model: 'm', system: 's', tools: [], messages: [{ role: 'user', content: 'go' }], maxTokens: 100, caller });
const noSleep = () => Promise.resolve();

function devTurns(caller: string, n: number): ScriptTurn[] {
  return Array.from({ length: n }, (_, i) => ({ caller, toolCalls: [{ name: 'read_file', input: { path: `f${i}.js` } }] }));
}

function chaos(turns: ScriptTurn[], seed: number, rate: number): ChaosClient {
  return new ChaosClient(new ScriptedClient({ version: 1, turns }, { sleep: noSleep }), { seed, rate }, { sleep: noSleep });
}

/** Drives `caller` until its scripted turns are used up; returns what each call answered. */
async function drain(c: ChaosClient, caller: string, calls: number): Promise<LlmResponse[]> {
  const out: LlmResponse[] = [];
  for (let i = 0; i < calls; i++) out.push(await c.complete(request(caller)));
  return out;
}

describe('parseChaosSpec', () => {
  it('reads the script and options', () => {
    expect(parseChaosSpec('s.json')).toEqual({ script: 's.json', seed: 1, rate: 0.15 });
    expect(parseChaosSpec('s.json,seed=7,rate=0.5')).toEqual({ script: 's.json', seed: 7, rate: 0.5 });
    for (const bad of ['s.json,rate=2', 's.json,seed=-1', 's.json,colour=red', ',seed=1']) expect(() => parseChaosSpec(bad), bad).toThrow(AciaError);
  });

  it('is reachable as --model chaos:<file>', async () => {
    await expect(createLlmClient('chaos:/no/such.json,seed=2')).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
  });
});

describe('ChaosClient', () => {
  it('inserts a perturbation before the scripted turn, never twice in a row, and serves every scripted turn', async () => {
    const c = chaos(devTurns('dev:t1', 6), 3, 1);
    const replies = await drain(c, 'dev:t1', 12);
    // rate 1: every other call is a perturbation, each followed by the real turn it displaced.
    expect(c.injections.map((i) => i.call)).toEqual([1, 3, 5, 7, 9, 11]);
    const real = replies.filter((_, i) => i % 2 === 1).map((r) => r.content.find((b) => b.type === 'tool_use'));
    expect(real.map((b) => (b?.type === 'tool_use' ? b.input : null))).toEqual([0, 1, 2, 3, 4, 5].map((i) => ({ path: `f${i}.js` })));
  });

  it('is deterministic per seed, whatever other callers do in between', async () => {
    const run = async (seed: number, interleave: boolean): Promise<Injection[]> => {
      const c = chaos([...devTurns('dev:t1', 20), ...devTurns('dev:t2', 20)], seed, 0.3);
      for (let i = 0; i < 20; i++) {
        await c.complete(request('dev:t1'));
        if (interleave) await c.complete(request('dev:t2'));
      }
      return c.injections.filter((x) => x.caller === 'dev:t1');
    };
    expect(await run(5, false)).toEqual(await run(5, true));
    expect(await run(5, false)).not.toEqual(await run(6, false));
  });

  it('produces every kind of fault across seeds, each the way a real model fails', async () => {
    const seen = new Map<string, LlmResponse>();
    for (let seed = 1; seed < 200 && seen.size < CHAOS_KINDS.length; seed++) {
      const c = chaos(devTurns('dev:t1', 2), seed, 1);
      const first = await c.complete(request('dev:t1'));
      const kind = c.injections[0]?.kind;
      if (kind && !seen.has(kind)) seen.set(kind, first);
    }
    expect([...seen.keys()].sort()).toEqual([...CHAOS_KINDS].sort());
    const tool = (k: string) => seen.get(k)?.content.find((b) => b.type === 'tool_use');
    expect(tool('invalid_tool_input')).toMatchObject({ name: 'read_file', input: { path: 42 } });
    expect(tool('missing_path')).toMatchObject({ name: 'read_file' });
    expect(tool('absent_anchor')).toMatchObject({ name: 'edit_file' });
    expect(tool('premature_success')).toMatchObject({ name: 'return_result', input: { summary: expect.stringMatching(/complete/) } });
    expect(seen.get('max_tokens_cut')?.stopReason).toBe('max_tokens');
    expect(seen.get('text_instead')?.content).toEqual([{ type: 'text', text: expect.any(String) }]);
    expect(tool('repeated_call')).toMatchObject({ name: 'list_dir' });
  });

  it('hands the turns a premature "done" skipped to the next agent of the same role', async () => {
    let seed = 1;
    // A seed whose first perturbation of dev:t1 is a premature return_result at call 1.
    for (; seed < 500; seed++) {
      const probe = chaos(devTurns('dev:t1', 3), seed, 0.5);
      await probe.complete(request('dev:t1'));
      if (probe.injections[0]?.kind === 'premature_success' && probe.injections[0].call === 1) break;
    }
    const c = chaos([...devTurns('dev:t1', 3), { caller: 'qa:t2', text: 'qa' }], seed, 0.5);
    const early = await c.complete(request('dev:t1'));
    expect(early.content[0]).toMatchObject({ name: 'return_result' });
    // The fix task (no turns of its own) is served dev:t1's three skipped turns, perturbations aside.
    const served: unknown[] = [];
    for (let i = 0; i < 10 && served.length < 3; i++) {
      const r = await c.complete(request('dev:t1-fix1'));
      if (!(r.requestId ?? '').startsWith('req_chaos')) served.push(r.content[0]?.type === 'tool_use' ? r.content[0].input : null);
    }
    expect(served).toEqual([{ path: 'f0.js' }, { path: 'f1.js' }, { path: 'f2.js' }]);
    // A verifier with no turns left is not served the developer's leftovers: it runs the tests and reports them.
    const qa = await c.complete(request('qa:t2-r1'));
    expect(qa.content[0]).toMatchObject({ name: 'run_tests' });
    const failed: LlmRequest = { ...request('qa:t2-r1'), messages: [{ role: 'user', content: [{ type: 'tool_result', toolUseId: 'x', content: 'TESTS FAILED [exit code 1]' }] }] };
    expect((await c.complete(failed)).content[0]).toMatchObject({ name: 'return_result', input: { passed: false } });
    // Other roles still fail loudly when the script runs out.
    await expect(c.complete(request('pm'))).rejects.toMatchObject({ code: 'SCRIPT_EXHAUSTED' });
  });
});
