// An MCP tool as an ordinary ACIA tool: same Tool shape, same truncation; what the server returned
// becomes text for the model, and an isError result a failed tool result.
import { z } from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolDescriptor } from '../../acm/contracts.js';
import { truncateMiddle } from '../truncate.js';
import type { Tool, ToolContext, ToolResult } from '../types.js';
import type { CatalogTool } from './catalog.js';

export type McpInvoke = (server: string, remoteName: string, input: Record<string, unknown>, ctx: ToolContext) => Promise<ToolResult>;

const Input = z.record(z.string(), z.unknown());

export function mcpTool(server: string, entry: CatalogTool, invoke: McpInvoke): Tool<Record<string, unknown>> {
  const descriptor: ToolDescriptor = {
    provider: 'mcp',
    namespace: `mcp.${server}`,
    name: entry.name,
    version: '1',
    description: entry.description,
    inputSchema: entry.inputSchema,
    outputSchema: { type: 'object' },
    sideEffects: !entry.readOnly,
  };
  return {
    name: entry.name,
    description: entry.description,
    input: Input,
    // A server's structured content is its own: ACIA records it as given.
    output: z.record(z.string(), z.unknown()),
    readOnly: entry.readOnly,
    descriptor,
    run: (input, ctx) => invoke(server, entry.remoteName, input, ctx),
  };
}

/** Display text of every content block; binary payloads are described, never inlined. */
export function resultText(result: CallToolResult): string {
  const parts: string[] = [];
  for (const block of result.content ?? []) {
    switch (block.type) {
      case 'text':
        parts.push(block.text);
        break;
      case 'image':
      case 'audio':
        parts.push(`[${block.type} ${block.mimeType}, ${Math.floor((block.data.length * 3) / 4)} bytes]`);
        break;
      case 'resource': {
        const r = block.resource;
        parts.push('text' in r && typeof r.text === 'string' ? `[resource ${r.uri}]\n${r.text}` : `[resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''}, binary]`);
        break;
      }
      case 'resource_link':
        parts.push(`[resource link ${block.uri}${block.name ? ` "${block.name}"` : ''}]`);
        break;
      default:
        parts.push(`[${(block as { type: string }).type} content]`);
    }
  }
  if (result.structuredContent !== undefined && parts.length === 0) parts.push(JSON.stringify(result.structuredContent));
  return parts.join('\n');
}

export function toToolResult(result: CallToolResult, exposed: string, data: Record<string, unknown>): ToolResult {
  const text = resultText(result);
  const failed = result.isError === true;
  const shown = failed ? `${exposed} returned an error: ${text || '(no message)'}` : text;
  return { ok: !failed, forModel: truncateMiddle(shown).text, forDisplay: shown, data };
}
