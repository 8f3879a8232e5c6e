// Dev tasks done by real third-party agents on other model APIs: Codex through @zed-industries/codex-acp
// (OpenAI Responses API) and Gemini CLI `--acp` (Gemini API, streamGenerateContent over SSE), each driven
// by the fake server's wire of its own API through ACIA's metering proxy. Their edits are checkpointed,
// merged and verified by QA; their model calls are in the ledger, priced, and counted against the budget,
// which stops each of them as it stops Claude Code's adapter; neither sees the user's key or home. Then
// best of four across vendors, picked by test results.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAnthropicServer, type FakeServer } from '../../src/core/llm/fake-server.js';
import { loadScript } from '../../src/core/llm/script.js';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { acia, git, ledgerOf, onlyRunId, tempDir } from './helpers.js';
import { ROOT, sampleRepo, startAcia } from './cli-helpers.js';
import { GOAL, happy, writeScript, type Turn } from './acp-scripts.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';

const BIN = join(ROOT, 'node_modules', '.bin');
const REAL = { ANTHROPIC_API_KEY: 'sk-ant-REAL-never-in-the-sandbox', OPENAI_API_KEY: 'sk-openai-REAL-never-in-the-sandbox', GEMINI_API_KEY: 'AIza-REAL-never-in-the-sandbox' };
const installed = ['codex-acp', 'gemini', 'claude-code-acp'].every((b) => existsSync(join(BIN, b)));

let server: FakeServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const writes = happy.turns.flatMap((t) => (t.caller === 'dev:t1' ? (t.toolCalls ?? []).filter((c) => c.name === 'write_file') : [])).map((w) => ({ path: String(w.input.path), content: String(w.input.content) }));
const WRONG = 'export function titleCase(text) {\n  return text;\n}\n';
type File = { path: string; content: string };

/** Each agent's own way of writing files, then its closing message. */
const dev: Record<string, (caller: string, files: File[]) => Turn[]> = {
  // Codex's apply_patch is a freeform (custom) tool: the patch text is its whole input.
  codex: (caller, files) => [
    { caller, toolCalls: [{ name: 'apply_patch', input: { input: ['*** Begin Patch', ...files.flatMap((f) => [`*** Add File: ${f.path}`, ...f.content.replace(/\n$/, '').split('\n').map((l) => `+${l}`)]), '*** End Patch', ''].join('\n') } }] },
    { caller, text: 'Added titleCase with a test.' },
  ],
  gemini: (caller, files) => [...files.map((f) => ({ caller, toolCalls: [{ name: 'write_file', input: { file_path: f.path, content: f.content } }] })), { caller, text: 'Added titleCase with a test.' }],
  claude: (caller, files) => [
    ...files.map((f) => ({ caller: `${caller}claude-sonnet*`, toolCalls: [{ name: 'Write', input: { file_path: f.path, content: f.content } }] })),
    { caller: `${caller}claude-sonnet*`, text: 'Added titleCase with a test.' },
    ...Array.from({ length: 8 }, () => ({ caller: `${caller}claude-haiku*`, text: 'ok' })),
  ],
};

const scriptFile = (turns: Turn[]): string => writeScript(turns, 'apis-script');

const pmAndQa = (dev: Turn[]): Turn[] => [...happy.turns.filter((t) => t.caller === 'pm'), ...dev, ...happy.turns.filter((t) => t.caller.startsWith('qa:'))];

function userConfig(): string {
  const xdg = tempDir('apis-xdg');
  mkdirSync(join(xdg, 'acia'));
  // The built-in names, with the model each is priced as.
  const devAgents = { codex: `${BIN}/codex-acp -c model="gpt-5.5"`, gemini: `${BIN}/gemini --acp --model gemini-2.5-pro`, claude: `${BIN}/claude-code-acp` };
  writeFileSync(join(xdg, 'acia', 'config.json'), JSON.stringify({ devAgents, testCommand: 'node run-tests.js' }));
  return xdg;
}

type Run = { repo: string; runId: string; entries: LedgerEntry[]; out: string; code: number };

async function run(args: string[], script: string): Promise<Run> {
  server = await startFakeAnthropicServer({ script: await loadScript(script) });
  return runOn(server, args);
}

async function runOn(server: FakeServer, args: string[]): Promise<Run> {
  const repo = sampleRepo('apis');
  const home = tempDir('apis-home');
  mkdirSync(join(home, '.codex'));
  writeFileSync(join(home, '.codex', 'auth.json'), '{"OPENAI_API_KEY":"SECRET-FROM-THE-USERS-HOME"}');
  const r = await startAcia(['run', GOAL, '--repo', repo, '--model', 'anthropic:claude-sonnet-5-5', ...args], {
    env: { ...REAL, ANTHROPIC_BASE_URL: server.url, OPENAI_BASE_URL: `${server.url}/v1`, GOOGLE_GEMINI_BASE_URL: server.url, HOME: home, XDG_CONFIG_HOME: userConfig() },
  }).done;
  const runId = onlyRunId(repo);
  return { repo, runId, entries: ledgerOf(repo, runId), out: r.stderr + r.stdout, code: r.code };
}

function expectMeteredDevTask(r: Run, agent: string, api: 'responses' | 'gemini', model: string): void {
  expect(r.code, r.out).toBe(0);
  const calls = r.entries.filter((e) => e.type === 'LLM_CALL' && e.actor === 'dev:t1');
  const requests = server!.requests.filter((q) => q.caller.startsWith(`acp:${agent}:`));
  // Every model call went through the proxy on the agent's own API, and is recorded, priced, for the task.
  expect(requests.length).toBeGreaterThanOrEqual(2);
  expect(requests.every((q) => q.api === api && q.model === model)).toBe(true);
  expect(calls).toHaveLength(requests.length);
  for (const c of calls) {
    const d = c.data as { model: string; usage: { inputTokens: number; outputTokens: number }; costUsd: number | null };
    expect(d.model).toBe(model);
    expect(d.usage.inputTokens).toBeGreaterThan(0);
    expect(d.usage.outputTokens).toBeGreaterThan(0);
    expect(d.costUsd ?? 0).toBeGreaterThan(0);
  }
  // Each call had an output limit when it went upstream: what was reserved is what it could cost.
  expect(requests.every((q) => (q.maxTokens ?? 0) > 0)).toBe(true);
  // Nothing the user holds reached the agent or the record.
  const everything = r.entries.map((e) => JSON.stringify(e)).join('\n');
  for (const k of Object.values(REAL)) expect(everything).not.toContain(k);
  expect(JSON.stringify(requests.map((q) => q.body))).not.toContain('SECRET-FROM-THE-USERS-HOME');
  // ACIA's own pipeline took its work from there: checkpoint, merge, QA's real test run.
  const checkpoint = r.entries.find((e) => e.type === 'CHECKPOINT');
  expect((checkpoint?.data as { files: string[] }).files.sort()).toEqual(['src/title-case.js', 'test/title-case.test.js']);
  const verdict = r.entries.find((e) => e.type === 'VERIFICATION' && (e.data as { source: string }).source === 'qa_run');
  expect((verdict?.data as { passed: boolean }).passed).toBe(true);
  expect(git(r.repo, 'show', `acia/${r.runId}:src/title-case.js`)).toContain('titleCase');
}

describe.skipIf(!sandboxAvailable() || !installed)('Codex and Gemini CLI as Dev agents (ACP), on their own model APIs', () => {
  it('Codex (codex-acp) edits the worktree through the OpenAI Responses API, metered and recorded', async () => {
    const r = await run(['--dev-agent', 'codex'], scriptFile(pmAndQa(dev.codex!('acp:codex:gpt-5.5', writes))));
    expectMeteredDevTask(r, 'codex', 'responses', 'gpt-5.5');
    // Its patch tool was a freeform call, and OpenAI's server-side web search was never offered to the model.
    const tools = server!.requests.filter((q) => q.api === 'responses').flatMap((q) => (q.body.tools as { type: string; name?: string }[]).map((t) => `${t.type}:${t.name ?? ''}`));
    expect(tools).toContain('custom:apply_patch');
    expect(tools.some((t) => t.startsWith('web_search'))).toBe(false);
  }, 150_000);

  it('Gemini CLI (--acp) edits the worktree through the Gemini API (streamGenerateContent), metered and recorded', async () => {
    const r = await run(['--dev-agent', 'gemini'], scriptFile(pmAndQa(dev.gemini!('acp:gemini:gemini-2.5-pro', writes))));
    expectMeteredDevTask(r, 'gemini', 'gemini', 'gemini-2.5-pro');
    const gemini = server!.requests.filter((q) => q.api === 'gemini');
    expect(gemini.every((q) => q.path.endsWith(':streamGenerateContent'))).toBe(true);
    // Google Search grounding (server-side) is not among its tools; the edits came through its own write_file.
    const tools = gemini.flatMap((q) => (q.body.tools as { functionDeclarations?: { name: string }[] }[]).flatMap((t) => (t.functionDeclarations ?? []).map((f) => f.name)));
    expect(tools).toContain('write_file');
    expect(tools).not.toContain('google_web_search');
    const edits = r.entries.filter((e) => e.type === 'TOOL_CALL' && e.actor === 'dev:t1').map((e) => (e.data as { name: string }).name);
    expect(edits.filter((n) => n === 'gemini:edit')).toHaveLength(2);
    // It asked before each write; ACIA's policy answered and recorded it.
    const asked = r.entries.filter((e) => e.type === 'POLICY_DECISION' && (e.data as { hook: string }).hook === 'agent.permission');
    expect(asked.map((e) => (e.data as { request: { toolCall: { paths: string[] } } }).request.toolCall.paths).flat().sort()).toEqual(['src/title-case.js', 'test/title-case.test.js']);
  }, 150_000);

  it('a cost budget stops Codex and Gemini CLI as it stops Claude Code: no call past it goes upstream, the run ends budget_exhausted', async () => {
    // Room for the PM's call (on a cheaper model), not for either agent's first: each call reserves its
    // worst case (its prompt, the output limit) before it goes upstream. Both runs at once, each with its own server.
    const MAX_USD = 0.06;
    const runs = await Promise.all(
      (['codex', 'gemini'] as const).map(async (agent) => {
        const own = await startFakeAnthropicServer({ script: await loadScript(scriptFile(pmAndQa(dev[agent]!(`acp:${agent}:${agent === 'codex' ? 'gpt-5.5' : 'gemini-2.5-pro'}`, writes)))) });
        try {
          return { agent, r: await runOn(own, ['--dev-agent', agent, '--max-cost-usd', String(MAX_USD), '--model', 'anthropic:claude-haiku-4-5']), requests: own.requests };
        } finally {
          await own.close();
        }
      }),
    );
    for (const { agent, r, requests } of runs) {
      expect(r.code, `${agent}: ${r.out}`).toBe(4);
      expect(r.entries.find((e) => e.type === 'BUDGET_EXCEEDED')?.data, `${agent}: ${r.entries.map((e) => e.type).join(' ')}`).toMatchObject({ limit: 'cost' });
      expect(r.entries.at(-1)).toMatchObject({ type: 'RUN_COMPLETED', data: { reason: 'budget_exhausted' } });
      const spent = r.entries.filter((e) => e.type === 'LLM_CALL').reduce((n, e) => n + ((e.data as { costUsd: number | null }).costUsd ?? 0), 0);
      expect(spent).toBeLessThanOrEqual(MAX_USD);
      expect(requests.filter((q) => q.caller.startsWith(`acp:${agent}:`)), agent).toHaveLength(0);
      expect(r.entries.some((e) => e.type === 'TASK_COMPLETED' || e.type === 'MERGE')).toBe(false);
      const verify = acia(['verify', r.runId, '--repo', r.repo]);
      expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    }
  }, 150_000);

  it('best of four across vendors (acia, claude, codex, gemini) is picked by test results', async () => {
    const code = writes.find((w) => w.path.startsWith('src/'))!;
    const test = writes.find((w) => w.path.startsWith('test/'))!;
    const notes = { path: 'NOTES.md', content: 'Notes on titleCase.\n'.repeat(20) };
    // ACIA's own Dev agent is right too, and also writes the notes file.
    const acia = happy.turns.filter((t) => t.caller === 'dev:t1').map((t) => ({ ...t, caller: 'dev:t1-acia' }));
    const firstWrite = acia.find((t) => t.toolCalls?.some((c) => c.name === 'write_file'))!;
    firstWrite.toolCalls = [...firstWrite.toolCalls!, { name: 'write_file', input: { path: notes.path, content: notes.content } }];
    const turns = pmAndQa([
      ...acia,
      // Claude Code is right but adds the notes file too; Codex's code fails the tests; Gemini's is right and smallest.
      ...dev.claude!('acp:claude:', [code, test, notes]),
      ...dev.codex!('acp:codex:gpt-5.5', [{ ...code, content: WRONG }, test]),
      ...dev.gemini!('acp:gemini:gemini-2.5-pro', [code, test]),
    ]);
    const r = await run(['--dev-agents', 'acia,claude,codex,gemini'], scriptFile(turns));
    expect(r.code, r.out).toBe(0);
    const judged = r.entries.find((e) => e.type === 'CANDIDATES_JUDGED')!.data as { winner: string; rationale: string; candidates: { agent: string; testsPassed: boolean; diffLines: number; costUsd: number }[] };
    const by = Object.fromEntries(judged.candidates.map((c) => [c.agent, c]));
    expect(by.codex?.testsPassed).toBe(false);
    expect(by.claude?.testsPassed).toBe(true);
    expect(by.gemini?.testsPassed).toBe(true);
    expect(by.acia?.testsPassed).toBe(true);
    expect(by.claude!.diffLines).toBeGreaterThan(by.gemini!.diffLines);
    expect(by.acia!.diffLines).toBeGreaterThan(by.gemini!.diffLines);
    // Every external candidate's model calls were metered on its own API and priced.
    for (const a of ['claude', 'codex', 'gemini']) expect(by[a]!.costUsd, a).toBeGreaterThan(0);
    // The verdicts are real test runs, one per candidate; the winner is the one the facts pick.
    const runs = r.entries.filter((e) => e.type === 'VERIFICATION' && (e.data as { source: string }).source === 'team_run').map((e) => (e.data as { taskId: string }).taskId);
    expect(runs.sort()).toEqual(['t1-acia', 't1-claude', 't1-codex', 't1-gemini']);
    expect(judged.winner).toBe('gemini');
    expect(judged.rationale).toMatch(/codex: tests failed/);
    expect(git(r.repo, 'show', `acia/${r.runId}:src/title-case.js`)).not.toContain('return text;');
  }, 240_000);
});
