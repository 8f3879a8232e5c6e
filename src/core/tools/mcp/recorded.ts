// The MCP side of a replay: the catalogs the run recorded, served in order; no server is started, and
// the recorded tool results are served by the replay's callTool, so a tool here is never run.
import { AciaError } from '../../errors.js';
import type { Tool } from '../types.js';
import { unavailableIn, type McpCatalog, type McpToolSource } from './catalog.js';
import type { AgentRoleName } from './config.js';
import { mcpTool } from './mcp-tool.js';

export class RecordedMcp implements McpToolSource {
  private tools: { tool: Tool; roles: readonly string[] }[] = [];
  private catalog: McpCatalog | null = null;

  constructor(private readonly catalogs: McpCatalog[]) {}

  open(): Promise<McpCatalog> {
    return this.next();
  }

  /** The run recorded a second catalog when servers were still starting at planning time: the next one. */
  settle(): Promise<McpCatalog | null> {
    if (this.catalog?.servers.some((s) => s.pending === true) !== true) return Promise.resolve(null);
    return this.next();
  }

  unavailable(toolName: string): string | null {
    return unavailableIn(this.catalog, toolName);
  }

  current(): McpCatalog | null {
    return this.catalog;
  }

  private next(): Promise<McpCatalog> {
    const catalog = this.catalogs.length > 1 ? this.catalogs.shift()! : this.catalogs[0];
    if (!catalog) return Promise.reject(new AciaError('REPLAY_DIVERGED', 'replay: the run opened MCP servers, but the recording has no MCP_TOOLS entry'));
    this.catalog = catalog;
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
