// `acia mcp` driven by the MCP SDK's own client, over stdio and over HTTP: a demo scenario runs to the
// end through acia_run, an escalation is answered through acia_answer, resources are read, and errors
// come back as tool errors with the CLI's message and code; a message sent with acia_say reaches the Dev
// agent's next request.
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { listeningUrl } from '../helpers/mcp-http.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';
import { acia, CLI, git, ledgerOf, tempDir } from './helpers.js';
import { zeroLatencyScript } from './cli-helpers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const SCENARIOS = join(ROOT, 'workspace', 'scenarios');

function makeRepo(): string {
  const repo = join(tempDir('mcp-serve'), 'repo');
  mkdirSync(repo, { recursive: true });
  cpSync(join(SCENARIOS, '_base'), repo, { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'base');
  return repo;
}

const env = (): Record<string, string> => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', XDG_CONFIG_HOME: tempDir('mcp-serve-xdg'), NO_COLOR: '1' });
const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
const call = async (client: Client, name: string, args: Record<string, unknown>, onprogress?: () => void) =>
  (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000, ...(onprogress ? { onprogress } : {}) })) as CallToolResult;

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup) await c();
  cleanup = [];
});

async function stdioClient(repo: string): Promise<Client> {
  const client = new Client({ name: 'acia-test', version: '1' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--repo', repo], env: env(), stderr: 'pipe' }));
  cleanup.push(() => client.close());
  return client;
}

describe.skipIf(!sandboxAvailable())('acia mcp (the team as an MCP server)', () => {
  it('runs the happy scenario to the end over stdio, streams progress, serves the wiki, verifies the ledger; a run goes on when its client leaves', async () => {
    const repo = makeRepo();
    const client = await stdioClient(repo);
    const tools = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(tools).toEqual(['acia_answer', 'acia_cancel', 'acia_resume', 'acia_run', 'acia_runs', 'acia_say', 'acia_show', 'acia_status', 'acia_verify']);
    const logs: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push(n.params.data);
    });

    let progress = 0;
    const r = await call(client, 'acia_run', { goal: 'Add a titleCase helper', model: `scripted:${join(SCENARIOS, 'happy', 'script.json')}`, testCommand: 'node run-tests.js', wait: true }, () => progress++);
    expect(r.isError, textOf(r)).toBeFalsy();
    const result = r.structuredContent as { runId: string; reason: string; runBranch: string };
    expect(result.reason).toBe('succeeded');
    expect(progress).toBeGreaterThan(5);
    expect(logs.some((l) => (l as { type?: string }).type === 'RUN_COMPLETED')).toBe(true);
    expect(git(repo, 'show', `${result.runBranch}:src/title-case.js`)).toContain('titleCase');

    const page = await client.readResource({ uri: `acia://runs/${result.runId}/wiki` });
    expect((page.contents[0] as { text: string }).text).toContain(result.runId);
    const index = await client.readResource({ uri: 'acia://wiki/index.md' });
    expect((index.contents[0] as { text: string }).text).toContain(result.runId);
    const ledger = await client.readResource({ uri: `acia://runs/${result.runId}/ledger` });
    expect((ledger.contents[0] as { text: string }).text.trim().split('\n')).toHaveLength(ledgerOf(repo, result.runId).length);
    const plan = JSON.parse(((await client.readResource({ uri: `acia://runs/${result.runId}/plan` })).contents[0] as { text: string }).text) as { chosen: { id: string } };
    expect(plan.chosen.id).toBe('plan-A');
    const listed = await client.listResources();
    expect(listed.resources.map((x) => x.uri)).toContain(`acia://runs/${result.runId}/ledger`);

    const verified = await call(client, 'acia_verify', { runId: result.runId });
    expect(verified.isError).toBeFalsy();
    expect((verified.structuredContent as { ok: boolean }).ok).toBe(true);
    const runs = await call(client, 'acia_runs', {});
    expect(textOf(runs)).toContain(result.runId);

    // Errors: the CLI's message, its code and exit code, as a tool error.
    const missing = await call(client, 'acia_show', { runId: '20990101-000000-nope00' });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/^acia: no run 20990101-000000-nope00 in /);
    expect(missing.structuredContent).toMatchObject({ code: 'RUN_NOT_FOUND', exitCode: 2 });
    const badModel = await call(client, 'acia_run', { goal: 'x', model: 'scripted:no-such-script.json' });
    expect(badModel.isError).toBe(true);
    expect(badModel.structuredContent).toMatchObject({ code: 'FILE_NOT_FOUND', exitCode: 2 });

    // A run started without waiting is in a process of its own: the client (and its server) leaving does not stop it.
    const second = await call(client, 'acia_run', { goal: 'Add a titleCase helper', model: `scripted:${zeroLatencyScript('parallel', tempDir('mcp-serve-script'))}`, testCommand: 'node run-tests.js' });
    const secondId = (second.structuredContent as { runId: string }).runId;
    await client.close();
    const until = Date.now() + 60_000;
    const last = () => ledgerOf(repo, secondId).at(-1)!;
    while (Date.now() < until && last().type !== 'RUN_COMPLETED') await new Promise((r) => setTimeout(r, 200));
    expect(last().data).toMatchObject({ reason: 'succeeded' });
  }, 120_000);

  it('a message through acia_say reaches the Dev agent: the plan gate answered with acia_answer, its first request carries it', async () => {
    const repo = makeRepo();
    // The user's own config asks for plan approval, so the run waits before any task starts.
    const xdg = tempDir('mcp-say-xdg');
    mkdirSync(join(xdg, 'acia'));
    writeFileSync(join(xdg, 'acia', 'config.json'), JSON.stringify({ approvePlan: true }));
    const client = new Client({ name: 'acia-test', version: '1' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--repo', repo], env: { ...env(), XDG_CONFIG_HOME: xdg }, stderr: 'pipe' }));
    cleanup.push(() => client.close());
    const script = zeroLatencyScript('happy', tempDir('mcp-say-script'));
    const gated = await call(client, 'acia_run', { goal: 'Add a titleCase helper', model: `scripted:${script}`, testCommand: 'node run-tests.js', wait: true });
    expect(gated.isError, textOf(gated)).toBeFalsy();
    const { runId, reason } = gated.structuredContent as { runId: string; reason: string };
    expect(reason).toBe('awaiting_human');
    const said = await call(client, 'acia_say', { runId, task: 't1', message: 'MCP-NOTE keep the old exports', mode: 'queue' });
    expect(said.isError, textOf(said)).toBeFalsy();
    const done = await call(client, 'acia_answer', { runId, answer: 'approve', wait: true });
    expect((done.structuredContent as { reason: string }).reason, textOf(done)).toBe('succeeded');
    const entries = ledgerOf(repo, runId);
    expect(entries.find((e) => e.type === 'MESSAGE_RECEIVED')).toMatchObject({ data: { to: 't1', mode: 'queue', author: expect.stringMatching(/\(MCP\)$/) } });
    expect(entries.find((e) => e.type === 'MESSAGE_DELIVERED')).toMatchObject({ data: { taskId: 't1', caller: 'dev:t1', turn: 1, at: 'turn' } });
    const firstDev = entries.find((e) => e.type === 'LLM_CALL' && (e.data as { caller: string }).caller === 'dev:t1')!.data as { requestHash: string };
    const request = readFileSync(join(repo, '.acia', 'runs', runId, 'blobs', firstDev.requestHash.replace(/^sha256:/, '')), 'utf8');
    expect(request).toContain('MCP-NOTE keep the old exports');
    // The replay hands the message to the same request: identical.
    const replay = acia(['replay', runId, '--repo', repo], { env: { XDG_CONFIG_HOME: xdg } });
    expect(replay.stdout, replay.stderr).toMatch(/identical/);
  }, 120_000);

  it('answers an escalation through acia_answer over HTTP on 127.0.0.1; acia_run returns before the run ends', async () => {
    const repo = makeRepo();
    const server: ChildProcess = spawn(process.execPath, [CLI, 'mcp', '--http', '0', '--repo', repo], { env: { ...env(), ACIA_MCP_TOKEN: 'test-token' }, stdio: ['ignore', 'ignore', 'pipe'] });
    cleanup.push(async () => {
      server.kill('SIGTERM');
      await new Promise((r) => server.once('exit', r));
    });
    const url = await listeningUrl(server);
    // Without the bearer token, nothing: 127.0.0.1 is reachable by every local user.
    const anonymous = new Client({ name: 'anonymous', version: '1' });
    await expect(anonymous.connect(new StreamableHTTPClientTransport(new URL(url)))).rejects.toThrow(/401|bearer/i);
    const client = new Client({ name: 'acia-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: 'Bearer test-token' } } }));
    cleanup.unshift(() => client.close());

    const started = await call(client, 'acia_run', { goal: 'Add a titleCase helper', model: `scripted:${join(SCENARIOS, 'escalate', 'script.json')}`, testCommand: 'node run-tests.js', maxIterations: 1 });
    expect(started.isError, textOf(started)).toBeFalsy();
    const { runId, status } = started.structuredContent as { runId: string; status: string };
    expect(status).toBe('running');

    let st: { status: string; escalation: { message: string; options: string[] } | null } = { status: 'running', escalation: null };
    const until = Date.now() + 60_000;
    while (st.status === 'running' && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 300));
      st = (await call(client, 'acia_status', { runId })).structuredContent as typeof st;
    }
    expect(st.status).toBe('awaiting_human');
    expect(st.escalation!.options).toContain('skip');

    // A message through acia_say waits in the run's inbox; the session that goes on records it with its author.
    const said = await call(client, 'acia_say', { runId, message: 'MCP-NOTE the date tests are flaky', mode: 'steer' });
    expect(said.isError, textOf(said)).toBeFalsy();
    expect(said.structuredContent).toMatchObject({ runId, to: 'pm', mode: 'steer' });
    const answered = await call(client, 'acia_answer', { runId, answer: 'skip', wait: true });
    expect(answered.isError, textOf(answered)).toBeFalsy();
    expect((answered.structuredContent as { reason: string }).reason).not.toBe('awaiting_human');
    const human = ledgerOf(repo, runId).find((e) => e.type === 'HUMAN_RESPONSE');
    expect(human?.actor).toBe('human');
    expect((human!.data as { action: string }).action).toBe('skip');
    const received = ledgerOf(repo, runId).find((e) => e.type === 'MESSAGE_RECEIVED');
    expect(received).toMatchObject({ actor: 'human', data: { to: 'pm', mode: 'steer', text: 'MCP-NOTE the date tests are flaky', author: expect.stringMatching(/\(MCP\)$/) } });
    const unknown = await call(client, 'acia_say', { runId, task: 't9', message: 'hello' });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/cannot message task t9 of run \S+: the plan has no task t9/);
    const again = await call(client, 'acia_answer', { runId, answer: 'retry' });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toMatch(/is not waiting for an answer/);

    // ACIA's own MCP client over streamable HTTP, pointed at this server: it lists the team's tools.
    const xdg = tempDir('mcp-serve-client');
    mkdirSync(join(xdg, 'acia'));
    writeFileSync(join(xdg, 'acia', 'config.json'), JSON.stringify({ mcpServers: { team: { type: 'http', url, headers: { Authorization: 'Bearer ${TEAM_TOKEN}' } } } }));
    const list = acia(['mcp', 'list'], { cwd: repo, env: { XDG_CONFIG_HOME: xdg, TEAM_TOKEN: 'test-token' } });
    expect(list.stdout, list.stderr).toMatch(/^team {2}\(.*; http\) {2}starts, 9 tool\(s\)$/m);
    expect(list.stdout).toMatch(/^ {2}mcp__team__acia_status \[read-only\] {2}agents: pm, dev, qa/m);
  }, 120_000);
});
