// The catalog of a run's MCP tools: what each server offers after filtering, under the names agents see
// (`mcp__<server>__<tool>`), and which roles get each. It is recorded, so replay needs no server.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Tool as McpToolDef } from '@modelcontextprotocol/sdk/types.js';
import type { Tool } from '../types.js';
import type { AgentRoleName, McpServerSpec, RoleAccess } from './config.js';

export const CatalogTool = z.object({
  /** The name agents call: mcp__<server>__<tool>, within the model APIs' 64-character limit. */
  name: z.string(),
  /** The tool's own name on its server. */
  remoteName: z.string(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
  readOnly: z.boolean(),
  roles: z.array(z.enum(['pm', 'dev', 'qa'])),
});
export type CatalogTool = z.infer<typeof CatalogTool>;

export const CatalogServer = z.object({
  name: z.string(),
  source: z.string(),
  transport: z.enum(['stdio', 'http', 'sse']),
  sandboxed: z.boolean(),
  /** Null when it started; otherwise why not (its tools are then absent). */
  error: z.string().nullable(),
  /** Still starting when planning began: its tools come with the catalog recorded before execution. */
  pending: z.boolean().optional(),
  tools: z.array(CatalogTool),
});
export type CatalogServer = z.infer<typeof CatalogServer>;

export const McpCatalog = z.object({ servers: z.array(CatalogServer) });
export type McpCatalog = z.infer<typeof McpCatalog>;

const MAX_NAME = 64;
const MAX_DESCRIPTION = 1024;

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** `mcp__<server>__<tool>` with characters the model APIs refuse replaced, shortened with a hash when long. */
export function exposedName(server: string, tool: string): string {
  const clean = `mcp__${server}__${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  if (clean.length <= MAX_NAME && clean === `mcp__${server}__${tool}`) return clean;
  // Two remote names that clean to the same string must not collide: a hash of the original decides.
  const h = createHash('sha256').update(`${server}\0${tool}`).digest('hex').slice(0, 8);
  return `${clean.slice(0, MAX_NAME - 9)}_${h}`;
}

/** Applies the server's include/exclude lists and role access to what it listed. */
export function catalogTools(spec: McpServerSpec, listed: readonly McpToolDef[]): CatalogTool[] {
  const out: CatalogTool[] = [];
  for (const t of listed) {
    if (spec.includeTools !== undefined && !spec.includeTools.includes(t.name)) continue;
    if (spec.excludeTools.includes(t.name)) continue;
    const readOnly = t.annotations?.readOnlyHint === true;
    const roles = (Object.entries(spec.access) as [AgentRoleName, RoleAccess][])
      .filter(([, access]) => access === 'all' || (access === 'readOnly' && readOnly))
      .map(([role]) => role);
    const schema = { ...(t.inputSchema as Record<string, unknown>) };
    delete schema.$schema;
    out.push({
      name: exposedName(spec.name, t.name),
      remoteName: t.name,
      // Every description goes into every request of every agent that has the tool: keep it bounded.
      description: `${clip(t.description ?? t.title ?? t.name, MAX_DESCRIPTION)} (MCP server ${spec.name})`,
      inputSchema: schema,
      readOnly,
      roles,
    });
  }
  return out;
}

/** What the team needs from MCP: the catalog at a session's start, each role's tools, and the end. */
export interface McpToolSource {
  /**
   * Starts the servers (or serves a recorded catalog) for a run whose main worktree is `runRoot`. With
   * `waitMs`, a server still starting by then is listed `pending` and the catalog is returned. With
   * `worktreeReady`, servers start once it resolves (they serve the worktree's files); a source with no
   * server to start does not wait for it, so a run without MCP never waits for its checkout here.
   */
  open(runRoot: string, o?: { waitMs?: number; worktreeReady?: PromiseLike<void> }): Promise<McpCatalog>;
  /** Waits for the servers `open` left pending; the complete catalog, or null when none was pending. */
  settle(): Promise<McpCatalog | null>;
  /** Why a tool named `mcp__<server>__...` is not there when its server did not start; null otherwise. */
  unavailable(toolName: string): string | null;
  /** The last catalog opened or settled; null before `open`. */
  current(): McpCatalog | null;
  /** The tools of the last opened catalog that `role` may use. */
  toolsFor(role: AgentRoleName): Tool[];
  /** An agent session in `root` starts: servers with tools for `role` may start now, while the model thinks. */
  prewarm(root: string, role: AgentRoleName): void;
  /** An agent session in `root` ended: its server instances may stop (a later session starts them again). */
  release(root: string): Promise<void>;
  close(): Promise<void>;
}

/** The explanation an agent gets for a tool of a server that did not start, from the catalog. */
export function unavailableIn(catalog: McpCatalog | null, toolName: string): string | null {
  if (catalog === null || !toolName.startsWith('mcp__')) return null;
  for (const s of catalog.servers) {
    if (!toolName.startsWith(`mcp__${s.name}__`) || s.tools.some((t) => t.name === toolName)) continue;
    if (s.error !== null) return `MCP server ${s.name} did not start, so ${toolName} is not available in this run: ${s.error.replace(`MCP server ${s.name} did not start: `, '')}. Do the work with the tools you have.`;
    if (s.pending === true) return `MCP server ${s.name} was still starting when this session began, so ${toolName} is not available to it. Do the work with the tools you have.`;
    return `MCP server ${s.name} has no tool ${toolName.slice(`mcp__${s.name}__`.length)} for this role.`;
  }
  return null;
}
