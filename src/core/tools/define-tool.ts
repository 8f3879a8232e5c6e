// defineTool and callTool: a tool is a small definition with a zod input; calling one never throws.
import { z } from 'zod';
import type { ToolDescriptor } from '../acm/contracts.js';
import { errorMessage, isAciaError } from '../errors.js';
import { truncateMiddle } from './truncate.js';
import type { Tool, ToolContext, ToolResult } from './types.js';

export interface ToolDefinition<I> {
  name: string;
  description: string;
  input: z.ZodType<I>;
  readOnly: boolean;
  run: (input: I, ctx: ToolContext) => Promise<ToolResult>;
  namespace?: string;
  version?: string;
}

export function defineTool<I>(def: ToolDefinition<I>): Tool<I> {
  const descriptor: ToolDescriptor = {
    provider: 'acia',
    namespace: def.namespace ?? 'acia.core',
    name: def.name,
    version: def.version ?? '1',
    description: def.description,
    inputSchema: z.toJSONSchema(def.input, { io: 'input' }),
    outputSchema: toolResultSchema,
    sideEffects: !def.readOnly,
  };
  return {
    name: def.name,
    description: def.description,
    input: def.input,
    readOnly: def.readOnly,
    descriptor,
    run: def.run,
  };
}

const toolResultSchema: Record<string, unknown> = {
  type: 'object',
  properties: {
    ok: { type: 'boolean' },
    forModel: { type: 'string' },
    forDisplay: { type: 'string' },
    data: { type: 'object' },
  },
  required: ['ok', 'forModel', 'forDisplay'],
};

/** A failed result the model can act on. */
export function toolError(message: string, data?: Record<string, unknown>): ToolResult {
  const text = truncateMiddle(message).text;
  return data === undefined ? { ok: false, forModel: text, forDisplay: message } : { ok: false, forModel: text, forDisplay: message, data };
}

/**
 * Validates `rawInput` against the tool's schema and runs it. Invalid input, thrown AciaErrors
 * (PATH_OUTSIDE_ROOT...) and any other failure come back as ok:false with a message, never as a throw.
 */
export async function callTool(tool: Tool, rawInput: unknown, ctx: ToolContext): Promise<ToolResult> {
  const parsed = tool.input.safeParse(rawInput ?? {});
  if (!parsed.success) {
    return toolError(`Invalid input for ${tool.name}: ${z.prettifyError(parsed.error)}`, { errorCode: 'INPUT_INVALID' });
  }
  try {
    if (ctx.signal?.aborted) return toolError(`${tool.name} was cancelled before it started`, { errorCode: 'ABORTED' });
    return await tool.run(parsed.data, ctx);
  } catch (e) {
    if (isAciaError(e)) return toolError(`${tool.name} failed: ${e.message}`, { errorCode: e.code });
    const code = (e as { code?: unknown }).code;
    return toolError(`${tool.name} failed: ${errorMessage(e)}`, typeof code === 'string' ? { errorCode: code } : undefined);
  }
}
