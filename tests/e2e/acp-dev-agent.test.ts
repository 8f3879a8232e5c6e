// A Dev task done by a real third-party agent: Claude Code through its ACP adapter (both of them:
// @zed-industries/claude-code-acp, which runs Claude Code's node build, and its successor
// @agentclientprotocol/claude-agent-acp, which runs the native build), driven by our fake Anthropic server through ACIA's metering proxy. Its edits are checkpointed,
// merged and verified by QA; its model calls are in the ledger and count against the budget; inside
// the sandbox it sees neither the user's key nor their home.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAnthropicServer, type FakeServer } from '../../src/core/llm/fake-server.js';
import { loadScript } from '../../src/core/llm/script.js';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { git, ledgerOf, onlyRunId, tempDir } from './helpers.js';
import { ROOT, sampleRepo, SCENARIOS, startAcia } from './cli-helpers.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';
import { startRecordingUpstream, type RecordingUpstream, type UpstreamRequest } from '../helpers/recording-upstream.js';
import { listeningPorts } from '../helpers/listening-ports.js';

const ADAPTER = join(ROOT, 'node_modules', '.bin', 'claude-code-acp');
/** Each adapter, with the model its Claude Code asks for by default (the scripted turns match on it). */
const ADAPTERS = [
  { bin: 'claude-code-acp', model: 'claude-sonnet' },
  { bin: 'claude-agent-acp', model: 'claude-opus' },
];
const REAL_KEY = 'sk-ant-REAL-USER-KEY-never-in-the-sandbox';
const GOAL = 'Add a titleCase(text) helper that capitalises every word, with a test';

let server: FakeServer | null = null;
let upstream: RecordingUpstream | null = null;
afterEach(async () => {
  await upstream?.close();
  upstream = null;
  await server?.close();
  server = null;
});

interface Turn {
  caller: string;
  text?: string;
  latencyMs?: number;
  toolCalls?: { name: string; input: Record<string, unknown> }[];
}

/** The happy scenario's PM and QA turns, with Claude Code (its own tool names) doing the Dev task. */
function script(model = 'claude-sonnet'): string {
  const happy = JSON.parse(readFileSync(join(SCENARIOS, 'happy', 'script.json'), 'utf8')) as { model?: string; turns: Turn[] };
  const writes = happy.turns.flatMap((t) => (t.caller === 'dev:t1' ? (t.toolCalls ?? []).filter((c) => c.name === 'write_file') : []));
  const cc = 'acp:claude-code:';
  const turns: Turn[] = [
    ...happy.turns.filter((t) => t.caller === 'pm'),
    ...writes.map((w) => ({ caller: `${cc}${model}*`, text: '', toolCalls: [{ name: 'Write', input: { file_path: w.input.path, content: w.input.content } }] })),
    // What a prompt-injected agent would try: the user's key and their ssh key.
    { caller: `${cc}${model}*`, text: '', toolCalls: [{ name: 'Bash', input: { command: 'echo "key=$ANTHROPIC_API_KEY"; cat "$HOME/.ssh/id_rsa" /root/.ssh/id_rsa 2>&1; true', description: 'look around' } }] },
    { caller: `${cc}${model}*`, text: 'Added titleCase in src/title-case.js with a test.' },
    // Claude Code's own side calls (titles, summaries) on its small model.
    ...Array.from({ length: 8 }, () => ({ caller: `${cc}claude-haiku*`, text: 'ok' })),
    ...happy.turns.filter((t) => t.caller.startsWith('qa:')),
  ];
  for (const t of turns) t.latencyMs = 0;
  const file = join(tempDir('cc-script'), 'script.json');
  writeFileSync(file, JSON.stringify({ version: 1, model: happy.model, turns }));
  return file;
}

function userConfig(extra: Record<string, unknown>, adapter = ADAPTER): string {
  const xdg = tempDir('cc-xdg');
  mkdirSync(join(xdg, 'acia'));
  writeFileSync(join(xdg, 'acia', 'config.json'), JSON.stringify({ devAgents: { 'claude-code': adapter, good: ADAPTER, bad: ADAPTER, slow: ADAPTER }, testCommand: 'node run-tests.js', ...extra }));
  return xdg;
}

/** Three Claude Code candidates: a right fix, a wrong one, and a right but slower and larger one. */
function bestOfScript(): string {
  const happy = JSON.parse(readFileSync(join(SCENARIOS, 'happy', 'script.json'), 'utf8')) as { model?: string; turns: Turn[] };
  const writes = happy.turns.flatMap((t) => (t.caller === 'dev:t1' ? (t.toolCalls ?? []).filter((c) => c.name === 'write_file') : []));
  const write = (path: unknown, content: unknown) => ({ name: 'Write', input: { file_path: path, content } });
  const code = writes.find((w) => String(w.input.path).startsWith('src/'))!;
  const test = writes.find((w) => String(w.input.path).startsWith('test/'))!;
  const candidate = (name: string, files: { name: string; input: Record<string, unknown> }[], latencyMs: number): Turn[] => [
    ...files.map((f) => ({ caller: `acp:${name}:claude-sonnet*`, text: '', latencyMs, toolCalls: [f] })),
    { caller: `acp:${name}:claude-sonnet*`, text: `${name}: done.`, latencyMs },
    ...Array.from({ length: 8 }, () => ({ caller: `acp:${name}:claude-haiku*`, text: 'ok', latencyMs: 0 })),
  ];
  const turns: Turn[] = [
    ...happy.turns.filter((t) => t.caller === 'pm'),
    ...candidate('good', [write(code.input.path, code.input.content), write(test.input.path, test.input.content)], 0),
    ...candidate('bad', [write(code.input.path, 'export function titleCase(text) {\n  return text;\n}\n'), write(test.input.path, test.input.content)], 0),
    ...candidate('slow', [write(code.input.path, code.input.content), write(test.input.path, test.input.content), write('NOTES.md', 'Notes on titleCase.\n'.repeat(40))], 1500),
    ...happy.turns.filter((t) => t.caller.startsWith('qa:')),
  ];
  for (const t of turns) t.latencyMs ??= 0;
  const file = join(tempDir('bo3-script'), 'script.json');
  writeFileSync(file, JSON.stringify({ version: 1, model: happy.model, turns }));
  return file;
}

function blobText(repo: string, runId: string, ref: string): string {
  return readFileSync(join(repo, '.acia', 'runs', runId, 'blobs', ref.replace('sha256:', '')), 'utf8');
}

describe.skipIf(!sandboxAvailable())('Claude Code as a Dev agent (ACP)', () => {
  it.each(ADAPTERS)('through $bin: edits the worktree in the sandbox; ACIA checkpoints, merges, verifies and meters it', async ({ bin, model }) => {
    server = await startFakeAnthropicServer({ script: await loadScript(script(model)) });
    const repo = sampleRepo('cc-dev');
    const home = tempDir('cc-home');
    mkdirSync(join(home, '.ssh'));
    writeFileSync(join(home, '.ssh', 'id_rsa'), 'SECRET-SSH-KEY-MATERIAL');
    // Asynchronously: the fake server lives in this process.
    const r = await startAcia(['run', GOAL, '--repo', repo, '--dev-agent', 'claude-code', '--model', 'anthropic:claude-sonnet-5-5'], {
      env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: REAL_KEY, HOME: home, XDG_CONFIG_HOME: userConfig({}, join(ROOT, 'node_modules', '.bin', bin)) },
    }).done;
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const runId = onlyRunId(repo);
    const entries = ledgerOf(repo, runId);
    const dev = (e: LedgerEntry) => e.actor === 'dev:t1';

    // Its model calls went through the proxy: recorded for the task, with the user's key added by ACIA.
    const calls = entries.filter((e) => e.type === 'LLM_CALL' && dev(e));
    expect(calls.length).toBeGreaterThanOrEqual(4);
    expect(calls.every((c) => (c.data as { usage: { outputTokens: number } }).usage.outputTokens > 0)).toBe(true);
    // Priced like ACIA's own calls: the agent's spend counts against the run's budget.
    expect(calls.every((c) => ((c.data as { costUsd: number | null }).costUsd ?? 0) > 0)).toBe(true);
    const devRequests = server.requests.filter((q) => q.caller.startsWith('acp:claude-code:'));
    expect(devRequests.length).toBe(calls.length);

    // Its tool calls are the task's trace; its permission requests were answered by policy.
    const tools = entries.filter((e) => e.type === 'TOOL_CALL' && dev(e)).map((e) => (e.data as { name: string }).name);
    expect(tools.filter((n) => n === 'claude-code:edit')).toHaveLength(2);
    expect(tools).toContain('claude-code:execute');
    const permissions = entries.filter((e) => e.type === 'POLICY_DECISION' && (e.data as { hook: string }).hook === 'agent.permission');
    expect(permissions.length).toBeGreaterThanOrEqual(3);

    // Inside the sandbox: this task's token as the key, no home.
    const bash = entries.find((e) => e.type === 'TOOL_RESULT' && (e.data as { name: string }).name === 'claude-code:execute');
    const seen = blobText(repo, runId, (bash!.data as { outputRef: string }).outputRef);
    expect(seen).toMatch(/key=acia-task-[\w-]{32}/);
    expect(seen).not.toContain('SECRET-SSH-KEY-MATERIAL');
    const everything = entries.map((e) => JSON.stringify(e)).join('\n');
    expect(everything).not.toContain(REAL_KEY);

    // ACIA's own pipeline took its work from there.
    const checkpoint = entries.find((e) => e.type === 'CHECKPOINT');
    expect((checkpoint?.data as { files: string[] }).files.sort()).toEqual(['src/title-case.js', 'test/title-case.test.js']);
    const verdict = entries.find((e) => e.type === 'VERIFICATION' && (e.data as { source: string }).source === 'qa_run');
    expect((verdict?.data as { passed: boolean }).passed).toBe(true);
    expect(git(repo, 'show', `acia/${runId}:src/title-case.js`)).toContain('titleCase');
  }, 150_000);

  it('stops the run cleanly when the external agent would pass the budget', async () => {
    server = await startFakeAnthropicServer({ script: await loadScript(script()) });
    const repo = sampleRepo('cc-budget');
    // Room for the PM's call, not for Claude Code's first (its system prompt and 16 tools are large).
    const r = await startAcia(['run', GOAL, '--repo', repo, '--dev-agent', 'claude-code', '--max-tokens', '30000', '--model', 'anthropic:claude-sonnet-5-5'], {
      env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: REAL_KEY, HOME: tempDir('cc-home'), XDG_CONFIG_HOME: userConfig({}) },
    }).done;
    expect(r.code, r.stderr + r.stdout).toBe(4);
    const entries = ledgerOf(repo, onlyRunId(repo));
    expect(entries.some((e) => e.type === 'BUDGET_EXCEEDED')).toBe(true);
    expect((entries.at(-1)?.data as { reason: string }).reason, JSON.stringify(entries.slice(-4).map((e) => [e.type, e.actor, e.data]))).toBe('budget_exhausted');
    const spent = entries.filter((e) => e.type === 'LLM_CALL').reduce((n, e) => n + ((e.data as { usage: { inputTokens: number; outputTokens: number } }).usage.inputTokens + (e.data as { usage: { outputTokens: number } }).usage.outputTokens), 0);
    expect(spent).toBeLessThanOrEqual(30000);
    expect(server.requests.filter((q) => q.caller.startsWith('acp:claude-code:claude-sonnet'))).toHaveLength(0);
  }, 150_000);

  it('a hostile agent gets only metered model calls with its own token: no other path, no server tools, no open port, no overspend', async () => {
    const happy = JSON.parse(readFileSync(join(SCENARIOS, 'happy', 'script.json'), 'utf8')) as { model?: string; turns: Turn[] };
    const turns: (Turn & { usage?: { outputTokens: number } })[] = [
      ...happy.turns.filter((t) => t.caller === 'pm'),
      ...Array.from({ length: 24 }, () => ({ caller: 'acp:hostile:claude-sonnet-5-5', text: 'ok' })),
      // The burst: each call costs its whole max_tokens, so what the proxy reserves is what it spends.
      ...Array.from({ length: 12 }, () => ({ caller: 'acp:hostile:claude-haiku-4-5', text: 'expensive', usage: { outputTokens: 8000 } })),
      ...happy.turns.filter((t) => t.caller.startsWith('qa:')),
    ];
    for (const t of turns) t.latencyMs = 0;
    const file = join(tempDir('hostile-script'), 'script.json');
    writeFileSync(file, JSON.stringify({ version: 1, model: happy.model, turns }));
    server = await startFakeAnthropicServer({ script: await loadScript(file), checkInvariants: false });
    // Another local user, while the agent works: every loopback port ACIA listens on gets a model call with no key.
    const probes: { port: number; status: number }[] = [];
    let aciaPid = 0;
    let scanned = false;
    const scan = async (r: UpstreamRequest) => {
      if (!r.body.includes('PAUSE-FOR-SCAN')) return;
      scanned = true;
      for (const port of listeningPorts(aciaPid)) {
        const res = await fetch(`http://127.0.0.1:${port}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify({ model: 'claude-sonnet-5-5', max_tokens: 64, messages: [{ role: 'user', content: 'SCAN-PROBE' }] }) }).catch(() => null);
        probes.push({ port, status: res?.status ?? 0 });
      }
    };
    upstream = await startRecordingUpstream(server.url, scan);
    // The scan can see a listening port: the upstream's own, in this process.
    expect(listeningPorts(process.pid)).toContain(Number(new URL(upstream.url).port));
    const repo = sampleRepo('cc-hostile');
    const xdg = tempDir('hostile-xdg');
    mkdirSync(join(xdg, 'acia'));
    writeFileSync(join(xdg, 'acia', 'config.json'), JSON.stringify({ devAgents: { hostile: `node ${join(ROOT, 'tests', 'fixtures', 'acp', 'hostile-agent.mjs')}` }, testCommand: 'node run-tests.js' }));
    const MAX_TOKENS = 60_000;
    const run = startAcia(['run', GOAL, '--repo', repo, '--dev-agent', 'hostile', '--max-tokens', String(MAX_TOKENS), '--max-iterations', '0', '--model', 'anthropic:claude-sonnet-5-5'], {
      env: { ANTHROPIC_BASE_URL: upstream.url, ANTHROPIC_API_KEY: REAL_KEY, HOME: tempDir('hostile-home'), XDG_CONFIG_HOME: xdg },
    });
    aciaPid = run.child.pid!;
    const r = await run.done;
    const entries = ledgerOf(repo, onlyRunId(repo));
    const own = (q: UpstreamRequest) => /^(pm|qa:|dev:)/.test(q.headers['x-acia-caller'] ?? '');
    const proxied = upstream.requests.filter((q) => !own(q));
    const summary = JSON.stringify(proxied.map((q) => [q.method, q.path, q.headers['x-acia-caller'] ?? '-', q.body.slice(0, 60)]));

    // Only model calls went upstream, each with the user's key added by ACIA, each metered as the task's.
    expect(proxied.length, summary).toBeGreaterThan(0);
    for (const q of proxied) {
      expect(`${q.method} ${q.path}`, summary).toMatch(/^POST \/v1\/messages(\?beta=true)?$/);
      expect(q.headers['x-api-key']).toBe(REAL_KEY);
      expect(q.headers.authorization).toBeUndefined();
    }
    const metered = entries.filter((e) => e.type === 'LLM_CALL' && e.actor === 'dev:t1');
    expect(metered.length, summary).toBe(proxied.length);
    // No server-side tools, MCP connectors or unknown beta features reached the API.
    for (const q of proxied) {
      const body = JSON.parse(q.body) as { tools?: { type?: string }[]; mcp_servers?: unknown };
      expect('mcp_servers' in body, summary).toBe(false);
      expect((body.tools ?? []).every((t) => t.type === undefined || t.type === 'custom'), summary).toBe(true);
      expect(q.headers['anthropic-beta'] ?? '', summary).not.toMatch(/files-api|mcp-client/);
    }

    // What the agent saw: its own per-task token, and a clear refusal for everything but model calls.
    const reportCall = proxied.find((q) => q.body.includes('HOSTILE-REPORT'));
    expect(reportCall, summary).toBeDefined();
    const content = (JSON.parse(reportCall!.body) as { messages: { content: string }[] }).messages[0]!.content;
    const seen = JSON.parse(content.slice('HOSTILE-REPORT '.length)) as { key: string; keyLength: number } & Record<'legit' | 'dotMessages' | 'beta', { status: number; body: string }> & Record<string, { status: number; body: string } | undefined>;
    expect(seen.key).not.toBe(REAL_KEY);
    expect(seen.keyLength).toBeGreaterThanOrEqual(32);
    expect(seen.legit.status).toBe(200);
    for (const k of ['noKey', 'guessedKey', 'bearerGuess']) expect(seen[k]!.status, k).toBe(401);
    for (const k of ['models', 'files', 'batches', 'dotDotFiles']) expect(seen[k]!.status, `${k}: ${seen[k]!.body}`).toBe(404);
    expect(seen.dotMessages.status, seen.dotMessages.body).toBe(200);
    for (const k of ['serverTool', 'mcpServers', 'duplicateKey']) {
      expect(seen[k]!.status, k).toBe(400);
      expect(seen[k]!.body, k).toMatch(/ACIA/);
    }
    expect(seen.beta.status).toBe(200);

    // Nothing another local user could reach: no port, or one that wants the token.
    expect(scanned).toBe(true);
    for (const p of probes) expect(p.status, JSON.stringify(probes)).toBe(401);
    expect(upstream.requests.some((q) => q.body.includes('SCAN-PROBE'))).toBe(false);

    // Twelve calls at once were admitted against what each could cost, not against what was spent so far.
    expect(r.code, r.stderr + r.stdout).toBe(4);
    expect(entries.some((e) => e.type === 'BUDGET_EXCEEDED')).toBe(true);
    const burst = proxied.filter((q) => q.body.includes('burst '));
    expect(burst.length).toBeGreaterThan(0);
    expect(burst.length).toBeLessThan(12);
    const spent = entries.filter((e) => e.type === 'LLM_CALL').reduce((n, e) => {
      const u = (e.data as { usage: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number } }).usage;
      return n + u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens;
    }, 0);
    expect(spent).toBeLessThanOrEqual(MAX_TOKENS);
  }, 150_000);

  it('best of three: each candidate in its own worktree, judged by real test runs; the good one wins', async () => {
    server = await startFakeAnthropicServer({ script: await loadScript(bestOfScript()) });
    const repo = sampleRepo('cc-best-of');
    const r = await startAcia(['run', GOAL, '--repo', repo, '--dev-agents', 'good,bad,slow', '--model', 'anthropic:claude-sonnet-5-5'], {
      env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: REAL_KEY, HOME: tempDir('cc-home'), XDG_CONFIG_HOME: userConfig({}) },
    }).done;
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const runId = onlyRunId(repo);
    const entries = ledgerOf(repo, runId);
    const judged = entries.find((e) => e.type === 'CANDIDATES_JUDGED')?.data as { winner: string; candidates: { agent: string; testsPassed: boolean; diffLines: number; branch: string }[] };
    expect(judged.winner).toBe('good');
    const by = Object.fromEntries(judged.candidates.map((c) => [c.agent, c]));
    expect(by.good?.testsPassed).toBe(true);
    expect(by.bad?.testsPassed).toBe(false);
    expect(by.slow?.testsPassed).toBe(true);
    expect(by.slow!.diffLines).toBeGreaterThan(by.good!.diffLines);
    // Every candidate's verdict is a real test run in its own worktree.
    const runs = entries.filter((e) => e.type === 'VERIFICATION' && (e.data as { source: string }).source === 'team_run').map((e) => (e.data as { taskId: string; passed: boolean }));
    expect(runs.map((v) => `${v.taskId}:${v.passed}`).sort()).toEqual(['t1-bad:false', 't1-good:true', 't1-slow:true']);
    // The winner's work is what merged and what QA verified; the losers' branches stay.
    expect(git(repo, 'show', `acia/${runId}:src/title-case.js`)).not.toContain('return text;');
    expect(() => git(repo, 'show', `acia/${runId}:NOTES.md`)).toThrow();
    expect(git(repo, 'branch', '--list', by.bad!.branch)).toContain(by.bad!.branch);
    expect(git(repo, 'show', `${by.bad!.branch}:src/title-case.js`)).toContain('return text;');
    const qa = entries.find((e) => e.type === 'VERIFICATION' && (e.data as { source: string }).source === 'qa_run');
    expect((qa?.data as { passed: boolean }).passed).toBe(true);
    // The decision is in the wiki with every candidate's verdict.
    const decision = entries.find((e) => e.type === 'CANDIDATES_JUDGED')!;
    const page = readFileSync(join(repo, '.acia', 'wiki', 'decisions', `${runId}-${decision.seq}-CANDIDATES_JUDGED.md`), 'utf8');
    expect(page).toMatch(/\| good \(winner\) \| passed \|/);
    expect(page).toMatch(/\| bad \| failed \|/);
  }, 180_000);
});
