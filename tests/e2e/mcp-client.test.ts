// MCP client end to end, through the built CLI: a scripted Dev agent works through real MCP servers
// from npm (filesystem restricted to its worktree, memory, everything) and through tiny fixture
// servers that crash, hang, print garbage or never start; the ledger records every call, and replay
// reproduces the run with no server configured at all.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';
import { acia, CLI, git, ledgerOf, onlyRunId, tempDir } from './helpers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const NM = join(ROOT, 'node_modules', '@modelcontextprotocol');
const FAULT = join(ROOT, 'tests', 'fixtures', 'mcp', 'fault-server.mjs');

function makeRepo(): string {
  const repo = join(tempDir('mcp'), 'repo');
  mkdirSync(repo, { recursive: true });
  cpSync(join(ROOT, 'workspace', 'scenarios', '_base'), repo, { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'base');
  return repo;
}

function userConfig(servers: Record<string, unknown>): string {
  const xdg = tempDir('mcp-xdg');
  mkdirSync(join(xdg, 'acia'), { recursive: true });
  writeFileSync(join(xdg, 'acia', 'config.json'), JSON.stringify({ mcpServers: servers }));
  return xdg;
}

const realServers = {
  fs: { command: 'node', args: [join(NM, 'server-filesystem', 'dist', 'index.js'), '${ACIA_WORKTREE}'] },
  mem: { command: 'node', args: [join(NM, 'server-memory', 'dist', 'index.js')], env: { MEMORY_FILE_PATH: '/tmp/memory.jsonl' } },
  ev: { command: 'node', args: [join(NM, 'server-everything', 'dist', 'index.js')], excludeTools: ['get-env'] },
};
const faultServers = {
  crash: { command: 'node', args: [FAULT, 'crash'] },
  hang: { command: 'node', args: [FAULT, 'hang'], callTimeoutS: 1 },
  garbage: { command: 'node', args: [FAULT, 'garbage'], callTimeoutS: 20 },
  silent: { command: 'node', args: [FAULT, 'silent'], startupTimeoutS: 1 },
};

const TITLE_CASE = 'export function titleCase(text) {\n  return text.replace(/[A-Za-z]+/g, (w) => w[0].toUpperCase() + w.slice(1).toLowerCase());\n}\n';
const TITLE_TEST = "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { titleCase } from '../src/title-case.js';\n\ntest('titleCase', () => assert.equal(titleCase('hello world'), 'Hello World'));\n";

/** The happy scenario's plan, with a Dev turn list that goes through MCP tools only. */
function script(devTurns: { toolCalls: { name: string; input: unknown }[] }[], planTools = false): string {
  const happy = JSON.parse(readFileSync(join(ROOT, 'workspace', 'scenarios', 'happy', 'script.json'), 'utf8')) as { turns: { caller: string }[] };
  // The PM first names an MCP tool nobody has (a plan problem it is told about), then a real one.
  const pm = JSON.parse(JSON.stringify(happy.turns.find((t) => t.caller === 'pm'))) as { toolCalls: { input: { plans: { tasks: { input: Record<string, unknown> }[] }[] } }[] };
  const withTools = (names: string[]) => {
    const turn = JSON.parse(JSON.stringify(pm)) as typeof pm;
    turn.toolCalls[0]!.input.plans[0]!.tasks[0]!.input.tools = names;
    return turn;
  };
  const turns = [
    ...(planTools ? [{ caller: 'pm', ...withTools(['mcp__fs__no_such_tool']) }, { caller: 'pm', ...withTools(['mcp__fs__write_file']) }] : [{ caller: 'pm', ...pm }]),
    ...devTurns.map((t) => ({ caller: 'dev:t1', ...t })),
    { caller: 'dev:t1', toolCalls: [{ name: 'return_result', input: { summary: 'Added titleCase through MCP.' } }] },
    ...happy.turns.filter((t) => t.caller.startsWith('qa:')),
  ];
  const file = join(tempDir('mcp-script'), 'script.json');
  writeFileSync(file, JSON.stringify({ version: 1, model: 'claude-sonnet-5-5', turns }));
  return file;
}

const results = (entries: LedgerEntry[]) =>
  new Map(entries.filter((e) => e.type === 'TOOL_RESULT').map((e) => [(e.data as { name: string }).name, e.data as { ok: boolean; outputRef: string; data?: Record<string, unknown> }]));
const blob = (repo: string, runId: string, ref: string) => readFileSync(join(repo, '.acia', 'runs', runId, 'blobs', ref.replace('sha256:', '')), 'utf8');

describe.skipIf(!sandboxAvailable())('MCP servers as agent tools', () => {
  it('a Dev agent works through real MCP servers in the sandbox; faults become tool errors; replay needs no server', () => {
    const repo = makeRepo();
    const xdg = userConfig({ ...realServers, ...faultServers });
    const file = script([
      { toolCalls: [{ name: 'mcp__fs__list_directory', input: { path: 'src' } }, { name: 'mcp__fs__read_text_file', input: { path: 'package.json' } }] },
      { toolCalls: [{ name: 'mcp__fs__write_file', input: { path: 'src/title-case.js', content: TITLE_CASE } }, { name: 'mcp__fs__write_file', input: { path: 'test/title-case.test.js', content: TITLE_TEST } }] },
      { toolCalls: [{ name: 'mcp__fs__read_text_file', input: { path: '/etc/hostname' } }] },
      { toolCalls: [{ name: 'mcp__mem__create_entities', input: { entities: [{ name: 'titleCase', entityType: 'function', observations: ['in src/title-case.js'] }] } }] },
      { toolCalls: [{ name: 'mcp__mem__search_nodes', input: { query: 'titleCase' } }] },
      { toolCalls: [{ name: 'mcp__ev__trigger-long-running-operation', input: { duration: 0.6, steps: 3 } }] },
      { toolCalls: [{ name: 'mcp__ev__get-sum', input: { a: 'two', b: 3 } }] },
      { toolCalls: [{ name: 'mcp__ev__echo', input: { message: 'x'.repeat(70_000) } }] },
      { toolCalls: [{ name: 'mcp__crash__crash', input: {} }] },
      { toolCalls: [{ name: 'mcp__hang__hang', input: {} }] },
      { toolCalls: [{ name: 'mcp__garbage__garbage', input: {} }] },
    ], true);
    const r = acia(['run', 'Add a titleCase helper', '--model', `scripted:${file}`, '--quiet'], { cwd: repo, env: { XDG_CONFIG_HOME: xdg } });
    expect(r.stderr).toMatch(/MCP server silent did not start: .*no MCP handshake within 1 s/);
    expect(r.code, r.stderr).toBe(0);
    const runId = onlyRunId(repo);
    const entries = ledgerOf(repo, runId);

    // The catalog: every server listed with its tools, the silent one with why it is absent.
    const catalog = entries.find((e) => e.type === 'MCP_TOOLS')!.data as { servers: { name: string; error: string | null; tools: number }[] };
    const byServer = new Map(catalog.servers.map((s) => [s.name, s]));
    expect(byServer.get('fs')!.tools).toBeGreaterThan(5);
    expect(byServer.get('silent')!.error).toMatch(/handshake/);

    // What the filesystem server wrote in the Dev worktree is on the run branch, and the tests pass there.
    expect(git(repo, 'show', `acia/${runId}:src/title-case.js`)).toBe(TITLE_CASE.trim());
    const qa = entries.filter((e) => e.type === 'VERIFICATION').map((e) => e.data as { passed: boolean; source: string });
    expect(qa.some((v) => v.source === 'qa_run' && v.passed)).toBe(true);

    // Every MCP call is a TOOL_CALL/TOOL_RESULT pair with its output blob.
    const calls = entries.filter((e) => e.type === 'TOOL_CALL' && (e.data as { name: string }).name.startsWith('mcp__'));
    expect(calls).toHaveLength(13);
    const res = results(entries);
    expect(res.get('mcp__fs__read_text_file')!.ok).toBe(false); // the last read: /etc/hostname, outside the worktree
    expect(blob(repo, runId, res.get('mcp__fs__read_text_file')!.outputRef)).toMatch(/outside allowed directories/);
    expect(blob(repo, runId, res.get('mcp__mem__search_nodes')!.outputRef)).toContain('in src/title-case.js');
    expect(res.get('mcp__ev__trigger-long-running-operation')!.ok).toBe(true);
    expect(res.get('mcp__ev__trigger-long-running-operation')!.data!.progressNotifications).toBeGreaterThan(0);
    expect(res.get('mcp__ev__get-sum')!.ok).toBe(false);
    const echoed = JSON.parse(blob(repo, runId, res.get('mcp__ev__echo')!.outputRef)) as { forModel: string; forDisplay: string };
    expect(echoed.forModel.length).toBeLessThan(30_000);
    expect(echoed.forModel).toMatch(/cut from the middle/);
    // The faults: each a tool error naming the server and what happened, and one line for the user.
    const crash = JSON.parse(blob(repo, runId, res.get('mcp__crash__crash')!.outputRef)) as { forModel: string };
    expect(res.get('mcp__crash__crash')!.ok).toBe(false);
    expect(crash.forModel).toMatch(/MCP server crash failed during crash: .*(exited|closed)/);
    const hang = JSON.parse(blob(repo, runId, res.get('mcp__hang__hang')!.outputRef)) as { forModel: string };
    expect(hang.forModel).toMatch(/did not answer hang within 1 s/);
    const garbage = JSON.parse(blob(repo, runId, res.get('mcp__garbage__garbage')!.outputRef)) as { forModel: string };
    expect(garbage.forModel).toMatch(/not MCP \(JSON-RPC\) on stdout/);
    expect(r.stderr).toMatch(/did not answer hang/);

    // The PM saw only read-only MCP tools; the Dev all of them.
    const toolsOf = (actor: string) => {
      const call = entries.find((e) => e.type === 'LLM_CALL' && e.actor === actor)!.data as { requestHash: string };
      return (JSON.parse(blob(repo, runId, call.requestHash)) as { tools: { name: string }[] }).tools.map((t) => t.name);
    };
    expect(toolsOf('pm')).toContain('mcp__fs__read_text_file');
    expect(toolsOf('pm')).not.toContain('mcp__fs__write_file');
    expect(toolsOf('dev:t1')).toContain('mcp__fs__write_file');
    expect(toolsOf('dev:t1')).not.toContain('mcp__ev__get-env'); // excludeTools

    // Planning references MCP tools through capabilities: listed to the PM, checked, passed to the Dev.
    const proposed = entries.filter((e) => e.type === 'PLAN_PROPOSED').map((e) => e.data as { valid: boolean; problems: { message: string }[] });
    expect(proposed[0]!.valid).toBe(false);
    expect(proposed[0]!.problems[0]!.message).toMatch(/mcp__fs__no_such_tool is not an MCP tool a dev agent has/);
    expect(proposed[1]!.valid).toBe(true);
    const requestOf = (actor: string) => JSON.parse(blob(repo, runId, (entries.find((e) => e.type === 'LLM_CALL' && e.actor === actor)!.data as { requestHash: string }).requestHash)) as { system: string; messages: { content: unknown }[] };
    expect(requestOf('pm').system).toContain("MCP tools from the user's servers");
    expect(requestOf('pm').system).toMatch(/mcp__fs__write_file \(dev, qa\)/);
    expect(JSON.stringify(requestOf('dev:t1').messages[0])).toContain('Use these MCP tools for this task: mcp__fs__write_file');

    expect(acia(['verify', runId], { cwd: repo }).code).toBe(0);
    expect(acia(['show', runId], { cwd: repo }).stdout).toMatch(/MCP servers: fs \(\d+ tools\), .*silent FAILED: /);

    // Replay with no MCP server configured: the recorded catalog and results are enough.
    const empty = userConfig({});
    const replay = acia(['replay', runId, '--repo', repo], { env: { XDG_CONFIG_HOME: empty } });
    expect(replay.stdout + replay.stderr).toMatch(/identical/i);
    expect(replay.code).toBe(0);
  }, 120_000);

  it('acia mcp list and acia config show each server with its source; the repository .mcp.json waits for trust', () => {
    const repo = makeRepo();
    writeFileSync(join(repo, '.mcp.json'), JSON.stringify({ mcpServers: { repoTool: { command: 'node', args: [FAULT, 'ok'] } } }));
    const xdg = userConfig({ fs: realServers.fs, silent: faultServers.silent, local: { command: 'node', args: [FAULT, 'ok'], sandbox: false } });
    const userFile = join(xdg, 'acia', 'config.json');
    const list = acia(['mcp', 'list'], { cwd: repo, env: { XDG_CONFIG_HOME: xdg } });
    expect(list.code, list.stderr).toBe(1); // a configured server does not start
    expect(list.stdout).toMatch(new RegExp(`^fs  \\(${userFile}; stdio, sandboxed\\)  starts, \\d+ tool\\(s\\)$`, 'm'));
    expect(list.stdout).toMatch(/^ {2}mcp__fs__read_text_file \[read-only\] {2}agents: pm, dev, qa/m);
    expect(list.stdout).toMatch(/^ {2}mcp__fs__write_file {2}agents: dev, qa/m);
    expect(list.stdout).toMatch(/^silent .*does not start: .*no MCP handshake within 1 s/m);
    expect(list.stdout).toMatch(/^local .*NOT sandboxed\) {2}starts, 1 tool/m);
    expect(list.stdout).toMatch(/^repoTool {2}\(.*\.mcp\.json; stdio, sandboxed\) {2}the repository file \.mcp\.json is not trusted/m);
    const json = JSON.parse(acia(['mcp', 'list', '--json'], { cwd: repo, env: { XDG_CONFIG_HOME: xdg } }).stdout) as { servers: { name: string; trusted: boolean }[] };
    expect(json.servers.find((x) => x.name === 'repoTool')!.trusted).toBe(false);

    const config = acia(['config'], { cwd: repo, env: { XDG_CONFIG_HOME: xdg } });
    expect(config.code, config.stderr).toBe(0);
    expect(config.stdout).toContain(`  fs  stdio node ${join(NM, 'server-filesystem', 'dist', 'index.js')} \${ACIA_WORKTREE}  (${userFile})`);
    expect(config.stdout).toMatch(/^ {2}local {2}stdio .*NOT sandboxed/m);
    expect(config.stdout).toMatch(/^ {2}repoTool {2}not started: .*not trusted.*\.mcp\.json\)$/m);
  }, 60_000);

  it.each([
    ['SIGKILL', true],
    ['SIGKILL', false],
    ['SIGINT', true],
  ] as const)('a %s of ACIA leaves no MCP server behind (server sandboxed: %s)', async (signal, sandboxed) => {
    const repo = makeRepo();
    const marker = `acia-orphan-${process.pid}-${Date.now()}`;
    const xdg = userConfig({ hang: { command: 'node', args: [FAULT, 'hang', marker], callTimeoutS: 600, sandbox: sandboxed } });
    const file = script([{ toolCalls: [{ name: 'mcp__hang__hang', input: {} }] }]);
    const child = spawn(process.execPath, [CLI, 'run', 'hang', '--model', `scripted:${file}`, '--quiet'], {
      cwd: repo,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', XDG_CONFIG_HOME: xdg, NO_COLOR: '1' },
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const running = () => spawnSync('pgrep', ['-f', marker], { encoding: 'utf8' }).stdout.trim().split('\n').filter((l) => l !== '');
    // Wait for the Dev agent's call to be in flight: the run started two instances (catalog + worktree).
    const until = Date.now() + 60_000;
    while (Date.now() < until && !ledgerHas(repo, 'mcp__hang__hang')) await new Promise((r) => setTimeout(r, 200));
    expect(running().length).toBeGreaterThan(0);
    child.kill(signal);
    const code = await exited;
    if (signal === 'SIGINT') {
      // Ctrl-C: the call is cancelled, the run ends as aborted and stops its servers before exiting.
      expect(code).toBe(130);
      expect(ledgerOf(repo, onlyRunId(repo)).at(-1)!.data).toMatchObject({ reason: 'aborted' });
    }
    // Polled to a deadline with room for a loaded machine; a server left behind would stay for good.
    const gone = Date.now() + 20_000;
    while (Date.now() < gone && running().length > 0) await new Promise((r) => setTimeout(r, 100));
    expect(running()).toEqual([]);
  }, 90_000);
});

function ledgerHas(repo: string, toolName: string): boolean {
  try {
    return ledgerOf(repo, onlyRunId(repo)).some((e) => e.type === 'TOOL_CALL' && (e.data as { name: string }).name === toolName);
  } catch {
    return false;
  }
}
