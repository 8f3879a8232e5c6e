// The MCP side of a replay: the catalogs the run recorded, served in order; no server is started, and
// the recorded tool results are served by the replay's callTool, so a tool here is never run.
import { AciaError } from '../../errors.js';
import type { Tool } from '../types.js';
import type { McpCatalog, McpToolSource } from './catalog.js';
import type { AgentRoleName } from './config.js';
import { mcpTool } from './mcp-tool.js';

export class RecordedMcp implements McpToolSource {
  private tools: { tool: Tool; roles: readonly string[] }[] = [];

  constructor(private readonly catalogs: McpCatalog[]) {}

  open(): Promise<McpCatalog> {
    const catalog = this.catalogs.length > 1 ? this.catalogs.shift()! : this.catalogs[0];
    if (!catalog) return Promise.reject(new AciaError('REPLAY_DIVERGED', 'replay: the run opened MCP servers, but the recording has no MCP_TOOLS entry'));
    this.tools = catalog.servers.flatMap((s) =>
      s.tools.map((t) => ({
        tool: mcpTool(s.name, t, () => Promise.reject(new AciaError('REPLAY_DIVERGED', `replay: ${t.name} would have called MCP server ${s.name}`))),
        roles: t.roles,
      })),
    );
    return Promise.resolve(catalog);
  }

  toolsFor(role: AgentRoleName): Tool[] {
    return this.tools.filter((t) => t.roles.includes(role)).map((t) => t.tool);
  }

  prewarm(): void {
    // Nothing starts during a replay.
  }

  release(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
