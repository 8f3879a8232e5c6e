// McpHub without the sandbox (setpriv only): the run's time budget bounds a call, a server that keeps
// crashing is restarted a bounded number of times, and every failure is a tool result, never a throw.
import * as fs from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool } from '../../../../src/core/tools/define-tool.js';
import { loadMcpServers, UserMcpServer } from '../../../../src/core/tools/mcp/config.js';
import { McpHub } from '../../../../src/core/tools/mcp/hub.js';
import type { ToolContext } from '../../../../src/core/tools/types.js';

const FAULT = join(import.meta.dirname, '..', '..', '..', 'fixtures', 'mcp', 'fault-server.mjs');
let hubs: McpHub[] = [];
afterEach(async () => {
  await Promise.all(hubs.map((h) => h.close()));
  hubs = [];
});

async function hubWith(mode: string, warnings: string[] = []) {
  const servers = { s: UserMcpServer.parse({ command: process.execPath, args: [FAULT, mode], sandbox: false }) };
  const hub = new McpHub(loadMcpServers({ repo: null, user: { servers, file: 'test' } }).servers, { sandbox: 'off', parentEnv: process.env, warn: (w) => warnings.push(w), clientVersion: 't' });
  hubs.push(hub);
  const root = mkdtempSync(join(tmpdir(), 'acia-mcp-hub-'));
  await hub.open(root);
  const ctx: ToolContext = { root, fs, runner: { run: () => Promise.reject(new Error('unused')) }, commandTimeoutS: 30 };
  return { tool: hub.toolsFor('dev')[0]!, ctx, hub };
}

describe('McpHub', () => {
  it('answers through a started server, and refuses a call once the time budget is spent', async () => {
    const { tool, ctx, hub } = await hubWith('ok');
    expect(await callTool(tool, {}, ctx)).toMatchObject({ ok: true, forModel: 'pong', data: { server: 's', tool: 'ping' } });
    // A released worktree's instance is stopped; the next session starts a fresh one.
    await hub.release(ctx.root);
    expect(await callTool(tool, {}, ctx)).toMatchObject({ ok: true, forModel: 'pong' });
    const late = await callTool(tool, {}, { ...ctx, deadlineMs: Date.now() - 1 });
    expect(late).toMatchObject({ ok: false, data: { errorCode: 'BUDGET_EXCEEDED' } });
    expect(late.forModel).toMatch(/time budget is spent/);
  });

  it('restarts a crashed server for the next call, at most twice, then reports it unusable', async () => {
    const warnings: string[] = [];
    const { tool, ctx } = await hubWith('crash', warnings);
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(await callTool(tool, {}, ctx));
    expect(outcomes.map((o) => o.ok)).toEqual([false, false, false, false]);
    expect(outcomes[0]!.forModel).toMatch(/MCP server s failed during crash: the server process exited \(stderr: fault-server: crashing on purpose\)/);
    expect(outcomes[3]!.forModel).toMatch(/is unusable: .* \(restarted 2 times\)/);
    expect(warnings).toHaveLength(4);
  });

  it('stops a call that outlives the budget deadline', async () => {
    const { tool, ctx } = await hubWith('hang');
    const t0 = Date.now();
    const r = await callTool(tool, {}, { ...ctx, deadlineMs: Date.now() + 400 });
    expect(r.ok).toBe(false);
    expect(r.forModel).toMatch(/did not answer hang within 0\.4 s/);
    // The server never answers: anything well under the test's timeout proves the deadline cut the call.
    expect(Date.now() - t0).toBeLessThan(20_000);
  });

  it('plans without a server still starting, names it slow, and gives its failure to an agent that calls its tools', async () => {
    const warnings: string[] = [];
    const servers = {
      ok: UserMcpServer.parse({ command: process.execPath, args: [FAULT, 'ok'], sandbox: false }),
      slow: UserMcpServer.parse({ command: process.execPath, args: [FAULT, 'silent'], sandbox: false, startupTimeoutS: 6 }),
    };
    const hub = new McpHub(loadMcpServers({ repo: null, user: { servers, file: 'test' } }).servers, { sandbox: 'off', parentEnv: process.env, warn: (w) => warnings.push(w), clientVersion: 't', slowAfterMs: 1000 });
    hubs.push(hub);
    const root = mkdtempSync(join(tmpdir(), 'acia-mcp-hub-'));
    // Long enough for `ok` (a node process) to start on a loaded shared machine (1.5 s was not), shorter
    // than `slow`'s time-out.
    const first = await hub.open(root, { waitMs: 5000 });
    expect(first.servers.map((s) => [s.name, s.error, s.pending ?? false])).toEqual([
      ['ok', null, false],
      ['slow', null, true],
    ]);
    expect(hub.unavailable('mcp__slow__anything')).toMatch(/still starting when this session began/);
    const full = await hub.settle();
    expect(full!.servers[1]).toMatchObject({ name: 'slow', error: 'MCP server slow did not start: no MCP handshake within 6 s' });
    expect(await hub.settle()).toBeNull();
    expect(hub.unavailable('mcp__slow__anything')).toBe('MCP server slow did not start, so mcp__slow__anything is not available in this run: no MCP handshake within 6 s. Do the work with the tools you have.');
    expect(hub.unavailable('mcp__ok__ping')).toBeNull();
    expect(hub.unavailable('read_file')).toBeNull();
    expect(warnings.some((w) => /slow is still starting after 1 s/.test(w))).toBe(true);
    expect(warnings.some((w) => /slow is still starting; planning goes on without its tools/.test(w))).toBe(true);
  });
});
