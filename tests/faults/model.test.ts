// Model faults injected into PM and Dev turns, through both model paths: the built CLI with the
// in-process scripted model, and the library with the fake Anthropic server and the real SDK. Each run
// either recovers or ends with a clear terminal reason and exit code, and its ledger verifies.
import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import type { Fault } from '../../src/core/llm/script.js';
import { faultScript, fileOnRunBranch, runCli, sampleRepo, sh, terminalOf, toolOutput, verifyCode } from './harness.js';
import { runWithFakeServer } from './library-run.js';

interface Outcome {
  exitCode: number;
  runId: string;
  reason: string | undefined;
  message: string;
  entries: LedgerEntry[];
  repo: string;
  /** Faults the fake server served, in order (the in-process path cannot observe them: null). */
  served: (Fault | null)[] | null;
}

type Path = (script: object) => Promise<Outcome>;

const viaCli: Path = (script) => {
  const repo = sampleRepo('model-cli');
  const r = runCli(repo, script);
  expect(r.runIds, r.stderr).toHaveLength(1);
  const runId = r.runIds[0]!;
  return Promise.resolve({ exitCode: r.code, runId, ...terminalOf(repo, runId), repo, served: null });
};

const viaSdk: Path = async (script) => {
  const repo = sampleRepo('model-sdk');
  const r = await runWithFakeServer(repo, script);
  return { exitCode: r.exitCode, runId: r.result.runId, ...terminalOf(repo, r.result.runId), repo, served: r.requests.map((q) => q.fault) };
};

function expectVerified(o: Outcome): void {
  const v = verifyCode(o.repo, o.runId);
  expect(v.code, v.stdout + v.stderr).toBe(0);
  // the user's checkout is never touched, whatever the model did
  expect(sh(o.repo, 'git', 'status', '--porcelain')).toBe('');
}

function expectSucceeded(o: Outcome): void {
  expect({ exitCode: o.exitCode, reason: o.reason }, o.message).toEqual({ exitCode: 0, reason: 'succeeded' });
  expect(fileOnRunBranch(o.repo, o.runId)).toBe('1.0.1\n');
  expectVerified(o);
}

const typed = (o: Outcome, type: string) => o.entries.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);

describe.each([
  ['built CLI, in-process scripted model', viaCli],
  ['library, fake Anthropic server + real SDK', viaSdk],
])('model faults (%s)', (_name, run) => {
  it('retries 429, 529, 500, cut streams and malformed tool JSON in PM and Dev turns, then succeeds', async () => {
    const o = await run(
      faultScript({
        pm: [
          { caller: 'pm', fault: '429', retryAfterS: 0 },
          { caller: 'pm', fault: '529', retryAfterS: 0 },
        ],
        dev: [
          { caller: 'dev:t1', fault: '500', retryAfterS: 0 },
          { caller: 'dev:t1', fault: 'cut_stream', text: 'Let me write the version file now, carefully.' },
        ],
        devAfterWrite: [
          { caller: 'dev:t1', fault: 'cut_tool_input', toolCalls: [{ name: 'return_result', input: { summary: 'a summary that is cut off half way' } }] },
          { caller: 'dev:t1', fault: 'malformed_tool_json', toolCalls: [{ name: 'return_result', input: { summary: 'broken' } }] },
        ],
      }),
    );
    expectSucceeded(o);
    if (o.served) expect(o.served.filter((f) => f !== null)).toEqual(['429', '529', '500', 'cut_stream', 'cut_tool_input', 'malformed_tool_json']);
    // a retried call is one recorded call: the faults never reach the ledger as turns
    expect(typed(o, 'LLM_CALL').filter((c) => c.caller === 'dev:t1')).toHaveLength(2);
    expect(typed(o, 'RETRY_SCHEDULED')).toEqual([]);
  });

  it('feeds an empty reply, an unknown tool, schema-invalid input and a max_tokens cut back to the Dev, which then succeeds', async () => {
    const o = await run(
      faultScript({
        dev: [
          { caller: 'dev:t1', fault: 'empty' },
          { caller: 'dev:t1', toolCalls: [{ name: 'delete_everything', input: { path: '/' } }] },
          { caller: 'dev:t1', toolCalls: [{ name: 'write_file', input: { path: 7, content: ['not', 'a', 'string'] } }] },
          { caller: 'dev:t1', text: 'I will now explain at great length what I', stopReason: 'max_tokens' },
        ],
      }),
    );
    expectSucceeded(o);
    const [unknown] = toolOutput(o.repo, o.runId, 'delete_everything');
    expect(unknown).toMatchObject({ ok: false });
    expect(unknown!.text).toMatch(/^Unknown tool "delete_everything"\. Available tools: .*write_file/);
    const writes = toolOutput(o.repo, o.runId, 'write_file');
    expect(writes.map((w) => w.ok)).toEqual([false, true]);
    expect(writes[0]!.text).toMatch(/^Invalid input for write_file: .*path/s);
    expect(typed(o, 'LLM_CALL').filter((c) => c.caller === 'dev:t1').map((c) => c.stopReason)).toEqual(['end_turn', 'tool_use', 'tool_use', 'max_tokens', 'tool_use', 'tool_use']);
  });

  it('a refusal fails the attempt; the task is retried from its checkpoint and succeeds', async () => {
    const o = await run(faultScript({ dev: [{ caller: 'dev:t1', text: 'I cannot help with that.', stopReason: 'refusal' }] }));
    expectSucceeded(o);
    expect(typed(o, 'RETRY_SCHEDULED')).toEqual([expect.objectContaining({ taskId: 't1', attempt: 2, reason: 'refused: I cannot help with that.' })]);
  });

  it('a refusal on every attempt stops the run awaiting a human (exit 3), with nothing merged', async () => {
    const no = { caller: 'dev:t1', text: 'No.', stopReason: 'refusal' as const };
    const o = await run(faultScript({ devTurns: [no, no] }));
    expect({ exitCode: o.exitCode, reason: o.reason }).toEqual({ exitCode: 3, reason: 'awaiting_human' });
    expect(o.message).toBe('task t1 failed: refused: No.');
    expect(typed(o, 'ESCALATION_REQUESTED')).toEqual([expect.objectContaining({ reason: 'task_failed', taskId: 't1' })]);
    expect(typed(o, 'MERGE')).toEqual([]);
    expect(fileOnRunBranch(o.repo, o.runId)).toBeNull();
    expectVerified(o);
  });

  it('a 529 that outlasts every retry fails the task and asks a human (exit 3)', async () => {
    const o = await run(faultScript({ dev: [{ caller: 'dev:t1', fault: '529', retryAfterS: 0, times: 10 }] }));
    expect({ exitCode: o.exitCode, reason: o.reason }).toEqual({ exitCode: 3, reason: 'awaiting_human' });
    expect(o.message).toMatch(/^task t1 failed: protocol_error: model call failed: .*[Oo]verloaded.*\(gave up after 5 attempts\)$/);
    expect(typed(o, 'TASK_FAILED')).toEqual([expect.objectContaining({ taskId: 't1', attempt: 2 })]);
    if (o.served) expect(o.served.filter((f) => f === '529')).toHaveLength(10);
    expectVerified(o);
  });

  it('an HTML body where the stream should be fails this attempt only; the retried task succeeds', async () => {
    const o = await run(faultScript({ dev: [{ caller: 'dev:t1', fault: 'garbage_body' }] }));
    expectSucceeded(o);
    expect(typed(o, 'RETRY_SCHEDULED')).toEqual([expect.objectContaining({ taskId: 't1', attempt: 2 })]);
    if (o.served) expect(o.served.filter((f) => f === 'garbage_body')).toHaveLength(1);
  });

  it('an HTML body to the PM ends the run with reason error (exit 1) naming the bad endpoint', async () => {
    const o = await run(faultScript({ pm: [{ caller: 'pm', fault: 'garbage_body' }] }));
    expect({ exitCode: o.exitCode, reason: o.reason }).toEqual({ exitCode: 1, reason: 'error' });
    expect(o.message).toMatch(/^the PM's model call failed: .*(non-JSON body|text\/html)/);
    expect(typed(o, 'PLAN_SELECTED')).toEqual([]);
    expectVerified(o);
  });

  it('a 401 is never retried: the run ends with reason error and exit 2 (a configuration error) naming the credentials', async () => {
    const o = await run(faultScript({ dev: [{ caller: 'dev:t1', fault: '401' }] }));
    expect({ exitCode: o.exitCode, reason: o.reason }).toEqual({ exitCode: 2, reason: 'error' });
    expect(o.message).toMatch(/authentication failed|rejected the credentials \(401\)/);
    expect(typed(o, 'RETRY_SCHEDULED')).toEqual([]);
    if (o.served) expect(o.served.filter((f) => f === '401')).toHaveLength(1);
    expectVerified(o);
  });
});
