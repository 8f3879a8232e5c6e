// The MCP servers an ACP client hands to a session (`session/new`/`session/load`'s `mcpServers`: stdio,
// HTTP or legacy SSE) as the team's servers: the user's editor chose them, so they start without a trust
// step, but sandboxed like every server (core/tools/mcp/config.ts `client`), and their values are taken
// literally. Their tools reach the PM, Dev and QA agents as `mcp__<name>__<tool>`.
import type { McpServer } from '@agentclientprotocol/sdk';
import { UserMcpServer } from '../../core/tools/mcp/config.js';

/** Where the team's `acia mcp list`-style reports say these servers came from. */
export const CLIENT_SOURCE = "the editor's ACP session (mcpServers)";

/**
 * The servers keyed by a usable name (a tool name is `mcp__<server>__<tool>`, so a client's display name
 * "Sequential Thinking" becomes letters, digits, `_` and `-`, unique), and one line for each entry that
 * cannot be used.
 */
export function clientMcpServers(servers: readonly McpServer[]): { servers: Record<string, UserMcpServer>; rejected: string[] } {
  const out: Record<string, UserMcpServer> = {};
  const rejected: string[] = [];
  for (const s of servers) {
    const base = s.name.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 28) || 'client';
    let name = base;
    for (let i = 2; name in out; i++) name = `${base}-${i}`;
    const entry = 'url' in s ? { type: s.type, url: s.url, headers: pairs(s.headers) } : { type: 'stdio', command: s.command, args: s.args, env: pairs(s.env) };
    // Parsed like a config entry, so defaults (roles, time-outs) are the config's; sandboxed whatever it says.
    const parsed = UserMcpServer.safeParse(entry);
    if (parsed.success) out[name] = { ...parsed.data, sandbox: true };
    else rejected.push(`MCP server ${s.name} from the client: ${parsed.error.issues[0]?.message ?? 'invalid'} at ${parsed.error.issues[0]?.path.join('.') ?? '?'}`);
  }
  return { servers: out, rejected };
}

function pairs(list: readonly { name: string; value: string }[]): Record<string, string> {
  return Object.fromEntries(list.map((p) => [p.name, p.value]));
}
