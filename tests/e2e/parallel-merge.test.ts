// Two parallel dev tasks that edit the same lines of one file, through the built CLI with the real SDK
// against the fake Anthropic server: the second merge conflicts, a dev.merge task resolves it in its
// own worktree, and the run ends merged and verified. A resolution that leaves markers escalates.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropicServer, type FakeServer } from '../../src/core/llm/fake-server.js';
import type { Script } from '../../src/core/llm/script.js';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { acia, git, ledgerOf, onlyRunId, testsPassOn } from './helpers.js';
import { sampleRepo, startAcia } from './cli-helpers.js';
import { recordedRequest } from '../helpers/recorded-request.js';

const BASE = readFileSync(join(import.meta.dirname, '..', '..', 'workspace', 'scenarios', '_base', 'src', 'strings.js'), 'utf8');
const TITLE = `\n/** "a b" -> "A B" */\nexport function titleCase(text) {\n  return text.replace(/[A-Za-z]+/g, (w) => w[0].toUpperCase() + w.slice(1));\n}\n`;
const REVERSE = `\n/** "a b" -> "b a" */\nexport function reverseWords(text) {\n  return text.split(' ').reverse().join(' ');\n}\n`;
const testOf = (name: string, input: string, output: string) =>
  `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { ${name} } from '../src/strings.js';\ntest('${name}', () => assert.equal(${name}(${JSON.stringify(input)}), ${JSON.stringify(output)}));\n`;

const plans = {
  plans: [
    {
      id: 'plan-A',
      rationale: 'two independent helpers, in parallel',
      tasks: [
        { id: 't1', capability: 'dev.implement', title: 'titleCase', input: { instructions: 'Add titleCase to src/strings.js with a test.', files: ['src/strings.js', 'test/title.test.js'] } },
        { id: 't2', capability: 'dev.implement', title: 'reverseWords', input: { instructions: 'Add reverseWords to src/strings.js with a test.', files: ['src/strings.js', 'test/reverse.test.js'] } },
        { id: 't3', capability: 'qa.verify', input: {} },
      ],
      edges: [
        { from: 't1', to: 't3' },
        { from: 't2', to: 't3' },
      ],
    },
  ],
  chosenPlanId: 'plan-A',
  selectionRationale: 'only plan',
};

function script(resolution: string | null): Script {
  const dev = (id: string, code: string, testFile: string, test: string) => [
    { caller: `dev:${id}`, toolCalls: [{ name: 'write_file', input: { path: 'src/strings.js', content: BASE + code } }, { name: 'write_file', input: { path: testFile, content: test } }] },
    { caller: `dev:${id}`, toolCalls: [{ name: 'return_result', input: { summary: `added ${id}` } }] },
  ];
  // A resolution keeps both helpers; a failed one returns with the markers still in the file, twice.
  const merge = resolution === null
    ? [1, 2].map(() => ({ caller: 'dev:t*', toolCalls: [{ name: 'return_result', input: { summary: 'looks fine to me' } }] }))
    : [
        { caller: 'dev:t*', toolCalls: [{ name: 'read_file', input: { path: 'src/strings.js' } }] },
        { caller: 'dev:t*', toolCalls: [{ name: 'write_file', input: { path: 'src/strings.js', content: resolution } }] },
        { caller: 'dev:t*', toolCalls: [{ name: 'return_result', input: { summary: 'kept both helpers' } }] },
      ];
  return {
    version: 1,
    model: 'claude-sonnet-5-5',
    turns: [
      { caller: 'pm', toolCalls: [{ name: 'return_result', input: plans }] },
      // told that t1 and t2 share src/strings.js, the PM keeps them parallel
      { caller: 'pm', toolCalls: [{ name: 'return_result', input: plans }] },
      ...dev('t1', TITLE, 'test/title.test.js', testOf('titleCase', 'a b', 'A B')),
      ...dev('t2', REVERSE, 'test/reverse.test.js', testOf('reverseWords', 'a b', 'b a')),
      ...merge,
      { caller: 'qa:*', toolCalls: [{ name: 'run_tests', input: {} }] },
      { caller: 'qa:*', toolCalls: [{ name: 'return_result', input: { passed: true, summary: 'ran' } }] },
    ],
  };
}

let server: FakeServer | null = null;
afterAll(async () => server?.close());

/** The CLI runs as a child process while this process serves the model (so never spawnSync here). */
async function run(prefix: string): Promise<{ repo: string; runId: string; code: number; out: string; entries: LedgerEntry[] }> {
  const repo = sampleRepo(prefix);
  const child = startAcia(['run', 'add titleCase and reverseWords', '--repo', repo, '--model', 'anthropic:claude-sonnet-5-5', '--parallel', '2', '--max-iterations', '1', '--quiet'], {
    env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: server!.url },
  });
  const r = await child.done;
  const runId = onlyRunId(repo);
  return { repo, runId, code: r.code, out: r.stdout + r.stderr, entries: ledgerOf(repo, runId) };
}

const added = (entries: LedgerEntry[]) => entries.filter((e) => e.type === 'TASK_ADDED').map((e) => e.data as { task: { id: string; capability: string; input: Record<string, unknown> }; reason: string; parent?: string });

describe('parallel tasks that edit the same lines of one file', () => {
  beforeAll(async () => {
    server = await startFakeAnthropicServer({ script: script(BASE + TITLE + REVERSE) });
  });

  it('end merged and verified, the conflict resolved by a dev.merge task', async () => {
    const { repo, runId, code, out, entries } = await run('merge-ok');
    expect(code, out).toBe(0);
    // the PM was told which files its parallel tasks share
    const pmCalls = entries.filter((e) => e.type === 'LLM_CALL' && (e.data as { caller: string }).caller === 'pm');
    expect(pmCalls).toHaveLength(2);
    const secondAsk = recordedRequest(repo, runId, (pmCalls[1]!.data as { requestHash: string }).requestHash);
    expect(secondAsk).toContain('tasks t1 and t2 may run at the same time and both change src/strings.js');
    const merges = added(entries).filter((a) => a.reason === 'merge');
    expect(merges).toHaveLength(1);
    const m = merges[0]!;
    expect(m.task.capability).toBe('dev.merge');
    const [first, second] = entries.filter((e) => e.type === 'MERGE').map((e) => e.data as { taskId: string; conflict: boolean });
    expect(first!.conflict).toBe(false);
    expect(second).toMatchObject({ taskId: m.parent, conflict: true });
    expect(m.task.id).toBe(`${m.parent!}-merge`);
    // both sides' instructions and the hunks were in the merge task's input
    expect(String(m.task.input.instructions)).toContain('Add titleCase to src/strings.js');
    expect(String(m.task.input.instructions)).toContain('Add reverseWords to src/strings.js');
    expect(String(m.task.input.conflicts)).toMatch(/<<<<<<<[\s\S]*=======[\s\S]*>>>>>>>/);
    const check = entries.find((e) => e.type === 'VERIFICATION' && (e.data as { taskId: string }).taskId === m.task.id)!;
    expect(check.data).toMatchObject({ passed: true, source: 'check', command: 'no conflict markers left in src/strings.js' });
    expect(entries.find((e) => e.type === 'MERGE' && (e.data as { taskId: string }).taskId === m.task.id)?.data).toMatchObject({ conflict: false });
    const qa = entries.find((e) => e.type === 'VERIFICATION' && (e.data as { taskId: string }).taskId === 't3')!;
    expect(qa.data).toMatchObject({ passed: true, source: 'qa_run', failedCount: 0 });
    expect(entries.at(-1)!.data).toMatchObject({ reason: 'succeeded' });
    // the run branch holds both helpers, no markers, and its tests pass
    const merged = git(repo, 'show', `acia/${runId}:src/strings.js`);
    expect(merged).toContain('titleCase');
    expect(merged).toContain('reverseWords');
    expect(merged).not.toMatch(/^(<{7}|={7}|>{7})/m);
    expect(testsPassOn(repo, `acia/${runId}`)).toBe(true);
    // the resolution is a real merge commit: the run head and the conflicting task's tip are its parents
    const mergeCommit = entries.find((e) => e.type === 'CHECKPOINT' && (e.data as { taskId: string }).taskId === m.task.id)!.data as { commit: string };
    expect(git(repo, 'rev-list', '--parents', '-n', '1', mergeCommit.commit).split(' ')).toHaveLength(3);
    expect(acia(['verify', runId, '--repo', repo]).code).toBe(0);
  });
});

describe('a dev.merge that leaves conflict markers', () => {
  beforeAll(async () => {
    await server?.close();
    server = await startFakeAnthropicServer({ script: script(null) });
  });

  it('escalates as a merge conflict after its attempts', async () => {
    const { code, out, entries } = await run('merge-fail');
    expect(code, out).toBe(3);
    const m = added(entries).find((a) => a.reason === 'merge')!;
    const checks = entries.filter((e) => e.type === 'VERIFICATION' && (e.data as { taskId: string }).taskId === m.task.id);
    expect(checks.map((c) => (c.data as { passed: boolean }).passed)).toEqual([false, false]);
    expect(entries.find((e) => e.type === 'ESCALATION_REQUESTED')?.data).toMatchObject({ reason: 'merge_conflict', taskId: m.task.id, options: ['guidance', 'retry', 'skip', 'abort'] });
    expect(entries.at(-1)!.data).toMatchObject({ reason: 'awaiting_human' });
  });
});
