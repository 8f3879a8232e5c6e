// A Claude Code style `.mcp.json` with a legacy SSE server (a real one from npm: server-everything's SSE
// mode), a server that throws at start and an HTTP server nothing listens on: `acia mcp list` names each
// failure by its cause, the run starts and uses the SSE server, and the Dev agent reads why the other
// servers' tools are missing instead of "Unknown tool".
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sandboxAvailable } from '../helpers/sandbox-available.js';
import { acia, ledgerOf, onlyRunId, tempDir } from './helpers.js';
import { ROOT, SCENARIOS, sampleRepo } from './cli-helpers.js';

const EVERYTHING = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

/** server-everything in its SSE mode; it says on stderr when it listens. */
async function sseServer(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, 'sse'], { env: { PATH: process.env.PATH ?? '', PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      if (/running on port/.test(err)) resolve();
    });
    child.once('exit', () => reject(new Error(`server-everything exited: ${err}`)));
  });
  return { url: `http://127.0.0.1:${port}/sse`, child };
}

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

describe.skipIf(!sandboxAvailable())('.mcp.json servers that fail, next to a legacy SSE one', () => {
  it('lists each failure with its cause, starts the run, and tells the Dev agent why a tool is missing', async () => {
    const repo = sampleRepo('mcp-fail');
    const sse = await sseServer();
    children.push(sse.child);
    const gone = `http://127.0.0.1:${await freePort()}/mcp`;
    writeFileSync(
      join(repo, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          legacy: { type: 'sse', url: sse.url, includeTools: ['echo'] },
          crash: { command: 'node', args: ['-e', 'throw new Error("BOOM_CFG is not set")'] },
          gone: { type: 'http', url: gone },
        },
      }),
    );
    const xdg = tempDir('mcp-fail-xdg');
    const env = { XDG_CONFIG_HOME: xdg };
    expect(acia(['trust'], { cwd: repo, env }).code).toBe(0);

    const list = acia(['mcp', 'list'], { cwd: repo, env });
    expect(list.code, list.stderr).toBe(1);
    expect(list.stdout).toMatch(/^legacy {2}\(.*\.mcp\.json; sse \(legacy HTTP\+SSE\)\) {2}starts, 1 tool\(s\)$/m);
    expect(list.stdout).toMatch(/^crash .*does not start: MCP server crash did not start: the server process exited \(stderr: Error: BOOM_CFG is not set\)$/m);
    expect(list.stdout).toMatch(new RegExp(`^gone .*does not start: MCP server gone did not start: nothing listens at ${gone}: connection refused`, 'm'));

    // The Dev agent calls the SSE server's tool and one tool of each failed server, then does the work.
    const happy = JSON.parse(readFileSync(join(SCENARIOS, 'happy', 'script.json'), 'utf8')) as { turns: { caller: string; latencyMs?: number }[] };
    const turns = happy.turns.map((t) => ({ ...t, latencyMs: 0 }));
    const firstDev = turns.findIndex((t) => t.caller === 'dev:t1');
    turns.splice(firstDev, 0, {
      caller: 'dev:t1',
      latencyMs: 0,
      toolCalls: [
        { name: 'mcp__legacy__echo', input: { message: 'over sse' } },
        { name: 'mcp__crash__configure', input: {} },
        { name: 'mcp__gone__search', input: {} },
      ],
    } as (typeof turns)[number]);
    const script = join(tempDir('mcp-fail-script'), 'script.json');
    writeFileSync(script, JSON.stringify({ ...happy, turns }));
    const run = acia(['run', 'Add a titleCase helper', '--model', `scripted:${script}`, '--quiet'], { cwd: repo, env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/MCP server crash did not start: .*BOOM_CFG is not set/);

    const runId = onlyRunId(repo);
    const entries = ledgerOf(repo, runId);
    const results = new Map(entries.filter((e) => e.type === 'TOOL_RESULT').map((e) => [(e.data as { name: string }).name, e.data as { ok: boolean; outputRef: string }]));
    const forModel = (name: string) => (JSON.parse(readFileSync(join(repo, '.acia', 'runs', runId, 'blobs', results.get(name)!.outputRef.replace('sha256:', '')), 'utf8')) as { forModel: string }).forModel;
    expect(results.get('mcp__legacy__echo')!.ok).toBe(true);
    expect(forModel('mcp__legacy__echo')).toContain('over sse');
    expect(forModel('mcp__crash__configure')).toBe('MCP server crash did not start, so mcp__crash__configure is not available in this run: the server process exited (stderr: Error: BOOM_CFG is not set). Do the work with the tools you have.');
    expect(forModel('mcp__gone__search')).toMatch(new RegExp(`^MCP server gone did not start, so mcp__gone__search is not available in this run: nothing listens at ${gone}: connection refused`));
    // The PM was told too, in its capability list.
    const pmCall = entries.find((e) => e.type === 'LLM_CALL' && e.actor === 'pm')!.data as { requestHash: string };
    const system = (JSON.parse(readFileSync(join(repo, '.acia', 'runs', runId, 'blobs', pmCall.requestHash.replace('sha256:', '')), 'utf8')) as { system: string }).system;
    expect(system).toMatch(/MCP servers whose tools are not available to this plan:\n {2}- crash: .*BOOM_CFG/);
  }, 120_000);
});
