// Median overhead of an MCP tool call against the same built-in tool: read_file (built in) against
// server-filesystem's read_text_file through McpHub, the stdio server already started (in the sandbox
// when bubblewrap is available). Usage: npm run build && node bench/mcp.mjs [runs]
import * as fs from 'node:fs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Config, HostRunner, McpHub, callTool, detectSandbox, loadMcpServers, readFile } from '../dist/index.js';
import { ROOT, median, round } from './util.mjs';

const now = () => Number(process.hrtime.bigint()) / 1e6;

export async function mcpOverhead(runs = 300) {
  const root = mkdtempSync(join(tmpdir(), 'acia-bench-mcp-'));
  writeFileSync(join(root, 'file.txt'), 'some content\n'.repeat(50));
  const sandbox = detectSandbox().status === 'available' ? 'bwrap' : 'off';
  const config = Config.parse({ mcpServers: { fs: { command: process.execPath, args: [join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js'), '${ACIA_WORKTREE}'] } } });
  const set = loadMcpServers({ repo: null, user: { servers: config.mcpServers, file: 'bench' } });
  const hub = new McpHub(set.servers, { sandbox, parentEnv: process.env, warn: () => undefined, clientVersion: 'bench' });
  const ctx = { root, fs, runner: new HostRunner(), commandTimeoutS: 30 };
  try {
    const catalog = await hub.open(root);
    if (catalog.servers[0].error) return { unavailable: catalog.servers[0].error };
    const mcpRead = hub.toolsFor('dev').find((t) => t.name === 'mcp__fs__read_text_file');
    const timed = (tool, input) => async () => {
      const t = now();
      const r = await callTool(tool, input, ctx);
      if (!r.ok) throw new Error(`${tool.name}: ${r.forModel}`);
      return now() - t;
    };
    const fns = { builtin: timed(readFile, { path: 'file.txt' }), mcp: timed(mcpRead, { path: 'file.txt' }) };
    const xs = { builtin: [], mcp: [] };
    for (const fn of Object.values(fns)) for (let i = 0; i < 20; i++) await fn(); // warm-up (JIT, server caches)
    for (let i = 0; i < runs; i++) for (const [k, fn] of Object.entries(fns)) xs[k].push(await fn());
    return { runs, sandbox, medianBuiltinMs: round(median(xs.builtin), 3), medianMcpMs: round(median(xs.mcp), 3), medianOverheadMs: round(median(xs.mcp) - median(xs.builtin), 3) };
  } finally {
    await hub.close();
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await mcpOverhead(Number(process.argv[2] ?? 300));
  process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
}
