// `acia acp` driven by acpx (npm: the headless ACP client), as its users run it: one `exec` with an MCP
// server from acpx's --mcp-config (a real stdio server from npm, server-memory) that the team's scripted
// Dev agent uses, sandboxed; every path in the updates is absolute and names the user's checkout. And
// without the model's key, acpx's `--auth-policy fail` sees the key's auth method advertised.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sandboxAvailable } from '../helpers/sandbox-available.js';
import { CLI, ledgerOf, onlyRunId, tempDir, type CliResult } from './helpers.js';
import { cliEnv, editedScript, ROOT, sampleRepo } from './cli-helpers.js';

const ACPX = join(ROOT, 'node_modules', 'acpx', 'dist', 'cli.js');
const MEMORY = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');

/** One acpx process; `HOME` is a fresh directory so no user's ~/.acpx config takes part. */
function acpx(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [ACPX, ...args], { env: cliEnv({ HOME: tempDir('acpx-home'), ...env }), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? 128, stdout, stderr })));
}

interface Rpc {
  method?: string;
  id?: number;
  params?: { update?: { sessionUpdate: string; locations?: { path: string }[]; content?: unknown } } & Record<string, unknown>;
  result?: Record<string, unknown>;
}

const agentCommand = (model: string) => `${process.execPath} ${CLI} acp --model ${model}`;

describe.skipIf(!sandboxAvailable())('acia acp under acpx', () => {
  it("a client's stdio MCP server reaches the Dev agent, sandboxed; every path is absolute, in the checkout", async () => {
    const repo = sampleRepo('acpx');
    // In the sandbox /tmp is the server's own: a file it writes there never shows on the host.
    const memoryFile = `/tmp/acia-acpx-memory-${randomUUID()}.jsonl`;
    const mcpConfig = join(tempDir('acpx-mcp'), 'mcp.json');
    writeFileSync(mcpConfig, JSON.stringify({ mcpServers: [{ name: 'Memory Graph', command: process.execPath, args: [MEMORY], env: [{ name: 'MEMORY_FILE_PATH', value: memoryFile }] }] }));
    const script = editedScript('happy', (turns) => {
      for (const t of turns) t.latencyMs = 0;
      const firstDev = turns.findIndex((t) => t.caller === 'dev:t1');
      turns.splice(
        firstDev,
        0,
        { caller: 'dev:t1', latencyMs: 0, toolCalls: [{ name: 'mcp__Memory_Graph__create_entities', input: { entities: [{ name: 'titleCase', entityType: 'function', observations: ['lives in src/title-case.js'] }] } }] } as (typeof turns)[number],
        { caller: 'dev:t1', latencyMs: 0, toolCalls: [{ name: 'mcp__Memory_Graph__search_nodes', input: { query: 'titleCase' } }] } as (typeof turns)[number],
      );
    });

    const r = await acpx(['--agent', agentCommand(`scripted:${script}`), '--cwd', repo, '--approve-all', '--mcp-config', mcpConfig, '--format', 'json', 'exec', 'Add a titleCase helper']);
    expect(r.code, r.stderr).toBe(0);
    const rpc = r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Rpc);
    const init = rpc.find((m) => m.id === 0 && m.result)?.result as { agentCapabilities: { mcpCapabilities: unknown } };
    expect(init.agentCapabilities.mcpCapabilities).toEqual({ http: true, sse: true });
    const sent = rpc.find((m) => m.method === 'session/new')?.params as { mcpServers: { name: string }[] };
    expect(sent.mcpServers.map((s) => s.name)).toEqual(['Memory Graph']);
    const promptId = rpc.find((m) => m.method === 'session/prompt')?.id;
    expect(rpc.find((m) => m.id === promptId && m.result)?.result).toMatchObject({ stopReason: 'end_turn' });

    // The run used the client's server, in the sandbox.
    const runId = onlyRunId(repo);
    const entries = ledgerOf(repo, runId);
    const catalog = entries.find((e) => e.type === 'MCP_TOOLS')!.data as { servers: { name: string; source: string; error: string | null; tools: number }[] };
    expect(catalog.servers).toEqual([expect.objectContaining({ name: 'Memory_Graph', source: "the editor's ACP session (mcpServers)", error: null })]);
    const results = entries.filter((e) => e.type === 'TOOL_RESULT').map((e) => e.data as { name: string; ok: boolean; outputRef: string });
    const search = results.find((d) => d.name === 'mcp__Memory_Graph__search_nodes')!;
    expect(results.find((d) => d.name === 'mcp__Memory_Graph__create_entities')?.ok).toBe(true);
    expect(search.ok).toBe(true);
    const blob = JSON.parse(readFileSync(join(repo, '.acia', 'runs', runId, 'blobs', search.outputRef.replace('sha256:', '')), 'utf8')) as { forModel: string };
    expect(blob.forModel).toContain('lives in src/title-case.js');
    expect(existsSync(memoryFile)).toBe(false);
    expect((entries.findLast((e) => e.type === 'RUN_COMPLETED')!.data as { reason: string }).reason).toBe('succeeded');

    // ACP: "All file paths in the protocol MUST be absolute"; they name files of the checkout, which outlives the run.
    const root = realpathSync(repo);
    const updates = rpc.filter((m) => m.method === 'session/update').map((m) => m.params!.update!);
    const paths = [
      ...updates.flatMap((u) => u.locations ?? []).map((l) => l.path),
      ...updates.flatMap((u) => (Array.isArray(u.content) ? (u.content as { type: string; path?: string }[]) : [])).filter((c) => c.type === 'diff').map((c) => c.path!),
    ];
    expect(paths).toContain(join(root, 'src', 'title-case.js'));
    for (const p of paths) {
      expect(isAbsolute(p), p).toBe(true);
      expect(p.startsWith(`${root}/`) && !p.includes('.acia/worktrees'), p).toBe(true);
    }
    // Tool output reads as the text the agent saw, not as the JSON it is stored in.
    const texts = updates.filter((u) => u.sessionUpdate === 'tool_call_update').flatMap((u) => (u.content as { type: string; content?: { text: string } }[]) ?? []).filter((c) => c.type === 'content').map((c) => c.content!.text);
    expect(texts.some((t) => t.includes('lives in src/title-case.js'))).toBe(true);
    for (const t of texts) expect(t).not.toMatch(/^\{"forDisplay"/);
  }, 120_000);

  it('without ANTHROPIC_API_KEY it advertises the key as an auth method, which acpx --auth-policy fail reports', async () => {
    const repo = sampleRepo('acpx-auth');
    const r = await acpx(['--agent', agentCommand('anthropic:claude-sonnet-4-5'), '--cwd', repo, '--auth-policy', 'fail', '--format', 'json', 'exec', 'Add a titleCase helper']);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/agent advertised auth methods \[anthropic-api-key\] but no matching credentials found/);
  }, 60_000);
});
