// `acia mcp` driven by the MCP Inspector's CLI (npm, the code `mcp-inspector --cli` runs), one-shot as
// its users run it, over stdio and streamable HTTP: every tool carries its annotations; a run started
// by one Inspector call outlives it and is cancelled for good by acia_cancel from another (a new server
// process, through `acia cancel`'s request file); Ctrl-C of an Inspector waiting on acia_run stops that
// run; over HTTP, a cancelled call (notifications/cancelled) stops its run, a wrong token or a foreign
// Origin is refused with a reason. A run stopped with its call ends `aborted` and is resumed to success.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { listeningUrl } from '../helpers/mcp-http.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';
import { CLI, ledgerOf, tempDir, type CliResult } from './helpers.js';
import { cliEnv, editedScript, ROOT, sampleRepo } from './cli-helpers.js';

// The Inspector CLI finds its own package.json relative to the working directory (`../package.json`): it is
// started in its build directory, as its own layout expects.
const INSPECTOR_DIR = join(ROOT, 'node_modules', '@modelcontextprotocol', 'inspector-cli', 'build');
const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;
const TOOLS = ['acia_run', 'acia_answer', 'acia_say', 'acia_resume', 'acia_cancel', 'acia_status', 'acia_runs', 'acia_show', 'acia_verify'];

const started: ChildProcess[] = [];
afterEach(() => {
  for (const c of started.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});

/** One Inspector CLI call; `onSpawn` sees the process (for a Ctrl-C). */
function inspector(args: string[], env: Record<string, string>, onSpawn?: (c: ChildProcess) => void): Promise<CliResult> {
  // Its own process group, as in a terminal: Ctrl-C reaches the Inspector and the server it started.
  const child = spawn(process.execPath, [join(INSPECTOR_DIR, 'index.js'), ...args], { cwd: INSPECTOR_DIR, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  started.push(child);
  onSpawn?.(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? 128, stdout, stderr })));
}

const stdioTarget = (repo: string) => [process.execPath, CLI, 'mcp', '--repo', repo];
const call = (tool: string, args: Record<string, string>) => ['--method', 'tools/call', '--tool-name', tool, ...Object.entries(args).flatMap(([k, v]) => ['--tool-arg', `${k}=${v}`])];

/** The happy scenario with no latency but for the Dev agent's first reply, which leaves time to stop it. */
function slowDevScript(devLatencyMs = 3000): string {
  return editedScript('happy', (turns) => {
    for (const t of turns) t.latencyMs = 0;
    turns.find((t) => t.caller.startsWith('dev'))!.latencyMs = devLatencyMs;
  });
}

async function until(what: string, ok: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const has = (repo: string, runId: string, type: string) => {
  try {
    return ledgerOf(repo, runId).some((e) => e.type === type);
  } catch {
    return false;
  }
};
const endOf = (repo: string, runId: string) => ledgerOf(repo, runId).filter((e) => e.type === 'RUN_COMPLETED').map((e) => (e.data as { reason: string }).reason);

function expectAnnotated(listed: string): void {
  const tools = (JSON.parse(listed) as { tools: { name: string; annotations?: Record<string, unknown> }[] }).tools;
  expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
  for (const t of tools) for (const h of HINTS) expect(typeof t.annotations?.[h], `${t.name} ${h}`).toBe('boolean');
  const byName = new Map(tools.map((t) => [t.name, t.annotations!]));
  expect(byName.get('acia_status')).toMatchObject({ readOnlyHint: true, openWorldHint: false });
  expect(byName.get('acia_run')).toMatchObject({ readOnlyHint: false, destructiveHint: false, openWorldHint: true, idempotentHint: false });
  expect(byName.get('acia_cancel')).toMatchObject({ readOnlyHint: false, idempotentHint: true });
  expect(byName.get('acia_say')).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
}

describe.skipIf(!sandboxAvailable())('acia mcp under the MCP Inspector CLI', () => {
  it('stdio: annotations; a one-shot acia_run outlives its client, acia_cancel from another ends it cancelled; Ctrl-C of a waiting Inspector stops its run', async () => {
    const repo = sampleRepo('mcp-insp');
    const env = { XDG_CONFIG_HOME: tempDir('mcp-insp-xdg') };
    const script = slowDevScript();
    // The run acia_cancel stops must still be running when two more processes (the Inspector and its
    // server) have started, however loaded the machine: its Dev agent never answers.
    const neverAnswers = slowDevScript(600_000);

    const listed = await inspector([...stdioTarget(repo), '--method', 'tools/list'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expectAnnotated(listed.stdout);

    // One call, and the Inspector (with its server) is gone: the run goes on in its own process.
    const run = await inspector([...stdioTarget(repo), ...call('acia_run', { goal: 'Add a titleCase helper', model: `scripted:${neverAnswers}`, testCommand: 'node run-tests.js' })], env);
    expect(run.code, run.stderr).toBe(0);
    const runId = (JSON.parse(run.stdout) as { structuredContent: { runId: string; status: string } }).structuredContent.runId;
    await until('the Dev task to start', () => has(repo, runId, 'TASK_STARTED'));
    expect(endOf(repo, runId)).toEqual([]);
    const cancelled = await inspector([...stdioTarget(repo), ...call('acia_cancel', { runId })], env);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect((JSON.parse(cancelled.stdout) as { structuredContent: unknown }).structuredContent).toMatchObject({ runId, reason: 'cancelled', resumable: false });
    expect(endOf(repo, runId)).toEqual(['cancelled']);
    // The same request file `acia cancel` writes reached the run's own process: the request is recorded.
    expect(ledgerOf(repo, runId).find((e) => e.type === 'CANCEL_REQUESTED')?.data).toMatchObject({ by: 'acia mcp (acia_cancel)', wasRunning: true });
    const again = await inspector([...stdioTarget(repo), ...call('acia_cancel', { runId })], env);
    expect(again.stdout).toMatch(/is already cancelled/);
    const refused = await inspector([...stdioTarget(repo), ...call('acia_resume', { runId })], env);
    expect(refused.stdout).toMatch(/is finished \(it was cancelled\); there is nothing to resume/);

    // Ctrl-C in the terminal of an Inspector waiting on acia_run: the run stops, recorded, resumable.
    let waiter: ChildProcess | null = null;
    const waiting = inspector([...stdioTarget(repo), ...call('acia_run', { goal: 'Add a titleCase helper', model: `scripted:${script}`, testCommand: 'node run-tests.js', wait: 'true' })], env, (c) => (waiter = c));
    const second = () => (ledgerRuns(repo).find((id) => id !== runId) ?? '');
    await until('the second run to start its Dev task', () => second() !== '' && has(repo, second(), 'TASK_STARTED'));
    process.kill(-waiter!.pid!, 'SIGINT');
    await waiting;
    await until('the interrupted run to record its end', () => endOf(repo, second()).length > 0);
    expect(endOf(repo, second())).toEqual(['aborted']);

    // It resumes to the end.
    const resumed = await inspector([...stdioTarget(repo), ...call('acia_resume', { runId: second(), wait: 'true' })], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect((JSON.parse(resumed.stdout) as { structuredContent: { reason: string } }).structuredContent.reason).toBe('succeeded');
    expect(endOf(repo, second())).toEqual(['aborted', 'succeeded']);
  }, 180_000);

  it('HTTP: a wrong token and a foreign Origin are refused with a reason; annotations; a cancelled waiting call stops its run', async () => {
    const repo = sampleRepo('mcp-insp-http');
    const env = { XDG_CONFIG_HOME: tempDir('mcp-insp-xdg') };
    const server = spawn(process.execPath, [CLI, 'mcp', '--http', '0', '--repo', repo], { env: cliEnv({ ...env, ACIA_MCP_TOKEN: 'inspector-token' }), stdio: ['ignore', 'ignore', 'pipe'] });
    started.push(server);
    const url = await listeningUrl(server);
    const http = [url, '--transport', 'http'];

    const wrong = await inspector([...http, '--header', 'Authorization: Bearer nope', '--method', 'tools/list'], env);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr + wrong.stdout).toMatch(/missing or wrong bearer token: acia mcp takes the static token/);
    const raw = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(raw.status).toBe(401);
    expect(raw.headers.get('www-authenticate')).toMatch(/^Bearer realm="acia mcp", error="invalid_token", error_description=".*static bearer token.*does not do OAuth"$/);
    const foreign = await inspector([...http, '--header', 'Authorization: Bearer inspector-token', '--header', 'Origin: http://evil.example', '--method', 'tools/list'], env);
    expect(foreign.code).toBe(1);
    expect(foreign.stderr + foreign.stdout).toMatch(/forbidden: origin \\?"http:\/\/evil\.example\\?" is not allowed/);
    const listed = await inspector([...http, '--header', 'Authorization: Bearer inspector-token', '--method', 'tools/list'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expectAnnotated(listed.stdout);

    // notifications/cancelled (what Claude Code sends on Esc) for a waiting acia_run.
    const client = new Client({ name: 'cancelling-client', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: 'Bearer inspector-token' } } }));
    const abort = new AbortController();
    const waiting = client.callTool({ name: 'acia_run', arguments: { goal: 'Add a titleCase helper', model: `scripted:${slowDevScript()}`, testCommand: 'node run-tests.js', wait: true } }, undefined, { signal: abort.signal, timeout: 120_000 });
    await until('the Dev task to start', () => ledgerRuns(repo).length === 1 && has(repo, ledgerRuns(repo)[0]!, 'TASK_STARTED'));
    abort.abort();
    await expect(waiting).rejects.toThrow(/abort/i);
    const runId = ledgerRuns(repo)[0]!;
    await until('the cancelled run to record its end', () => endOf(repo, runId).length > 0);
    expect(endOf(repo, runId)).toEqual(['aborted']);
    const status = (await client.callTool({ name: 'acia_status', arguments: { runId } })) as CallToolResult;
    expect(status.structuredContent).toMatchObject({ status: 'aborted' });
    const resumed = (await client.callTool({ name: 'acia_resume', arguments: { runId, wait: true } }, undefined, { timeout: 120_000 })) as CallToolResult;
    expect(resumed.structuredContent).toMatchObject({ reason: 'succeeded' });
    await client.close();
  }, 180_000);
});

/** The repository's run ids, oldest first (an id starts with its UTC start time). */
function ledgerRuns(repo: string): string[] {
  try {
    return readdirSync(join(repo, '.acia', 'runs')).sort();
  } catch {
    return [];
  }
}
