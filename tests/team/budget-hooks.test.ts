// The team's model hooks with and without a shared budget gate, through the real agent loop: with a
// gate, each call is reserved before, settled at its cost after, released when it fails, and a gate's
// refusal is the same BudgetExceededError; without one, the local check is what it always was.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runAgent } from '../../src/agents/agent-loop.js';
import { AciaError } from '../../src/core/errors.js';
import type { LlmClient, LlmResponse } from '../../src/core/llm/types.js';
import { BudgetExceededError, type BudgetGate } from '../../src/team/budget.js';
import { modelHooks, type RunContext } from '../../src/team/run-context.js';
import { budgetContext, RecordingGate } from './budget-rig.js';
import { builtinRoles } from '../../src/team/roles.js';

function context({ maxCostUsd, maxMinutes, ...o }: { gate?: BudgetGate; spentUsd?: number; maxCostUsd?: number; waived?: boolean; minutesAgo?: number; maxMinutes?: number }) {
  return budgetContext({
    runId: 'run-1',
    ...o,
    model: { id: 'm', estimate: () => ({ usd: 0.5, tokens: 700 }), costUsd: () => 0.25 },
    config: { budget: { maxCostUsd: maxCostUsd ?? 1, ...(maxMinutes === undefined ? {} : { maxMinutes }) } },
  });
}

const refusal = { limit: 'cost', spent: 2.5, max: 2 } as const;

const reply: LlmResponse = {
  content: [{ type: 'tool_use', id: 'a', name: 'return_result', input: { summary: 'done' } }],
  stopReason: 'tool_use',
  usage: { inputTokens: 30, outputTokens: 10, cacheReadTokens: 2, cacheWriteTokens: 1 },
  model: 'm',
  requestId: null,
};
const answering: LlmClient = { provider: 'test', complete: () => Promise.resolve(reply) };
const failing: LlmClient = { provider: 'test', complete: () => Promise.reject(new AciaError('LLM_SERVER', 'upstream down')) };
const toolbox = { specs: [], readOnly: () => true, invoke: () => Promise.resolve({ ok: true, forModel: '', forDisplay: '' }) };
const run = (ctx: RunContext, llm: LlmClient) =>
  runAgent({ model: 'm', caller: 'dev:t1', system: 's', task: 't', output: z.object({ summary: z.string() }), maxTurns: 3, maxTokens: 100, llm, toolbox, ...modelHooks(ctx, 'dev:t1', 't1', builtinRoles(ctx.deps.model).byName.get('dev')!) });

describe('model hooks with a shared budget gate', () => {
  it('reserves before the call and settles its actual cost and tokens after the LLM_CALL is recorded', async () => {
    const gate = new RecordingGate();
    const ctx = context({ gate });
    expect((await run(ctx, answering)).kind).toBe('returned');
    expect(gate.log).toEqual(['reserve run-1 700 enforce', 'settle r1 0.25 43']);
    expect(ctx.recorded).toEqual(['LLM_CALL']);
  });

  it('gives the reservation back when the call fails', async () => {
    const gate = new RecordingGate();
    await expect(run(context({ gate }), failing)).rejects.toThrow(/upstream down/);
    expect(gate.log).toEqual(['reserve run-1 700 enforce', 'release r1']);
  });

  it('a refusal is a BudgetExceededError carrying the gate’s breach, and no call is made', async () => {
    const gate = new RecordingGate(refusal);
    const ctx = context({ gate });
    const err = await run(ctx, answering).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetExceededError);
    expect((err as BudgetExceededError).breach).toEqual({ limit: 'cost', spent: 2.5, max: 2 });
    expect(ctx.recorded).toEqual([]);
  });

  it('the gate, not this process’s fold, decides cost; a waived budget reserves without enforcing', async () => {
    // Locally $0.9 + $0.5 would pass $1, but with a gate the shared count is the one that matters.
    const gate = new RecordingGate();
    expect((await run(context({ gate, spentUsd: 0.9 }), answering)).kind).toBe('returned');
    const waived = new RecordingGate(refusal);
    expect((await run(context({ gate: waived, waived: true }), answering)).kind).toBe('returned');
    expect(waived.log[0]).toBe('reserve run-1 700 waived');
  });

  it('minutes stay this process’s check, before anything is reserved', async () => {
    const gate = new RecordingGate();
    const err = await run(context({ gate, minutesAgo: 11, maxMinutes: 10 }), answering).catch((e: unknown) => e);
    expect((err as BudgetExceededError).breach.limit).toBe('minutes');
    expect(gate.log).toEqual([]);
  });
});

it('a shared budget’s breach says how much of it calls under way hold', () => {
  expect(new BudgetExceededError({ limit: 'cost', spent: 0.35, max: 0.3, inFlight: 0.26 }).message).toBe('budget exhausted: cost $0.3500 would pass the limit of $0.3 ($0.2600 of it held by calls under way)');
  expect(new BudgetExceededError({ limit: 'tokens', spent: 12, max: 10 }).message).toBe('budget exhausted: 12 tokens would pass the limit of 10');
});

describe('model hooks without a gate (a local run)', () => {
  it('checks cost against the run’s own fold, as before', async () => {
    const err = await run(context({ spentUsd: 0.9 }), answering).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetExceededError);
    expect((err as BudgetExceededError).breach).toEqual({ limit: 'cost', spent: 1.4, max: 1 });
    expect((await run(context({ spentUsd: 0.4 }), answering)).kind).toBe('returned');
  });
});
