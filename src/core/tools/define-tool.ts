// defineTool and callTool: a tool is a small definition with a zod input and a zod output (what its
// result carries in `data`); calling one never throws.
import { z } from 'zod';
import type { ToolDescriptor } from '../acm/contracts.js';
import { AciaError, errorMessage, isAciaError } from '../errors.js';
import { truncateMiddle } from './truncate.js';
import type { Tool, ToolContext, ToolData, ToolResult } from './types.js';

export interface ToolDefinition<I, D extends ToolData> {
  name: string;
  description: string;
  input: z.ZodType<I>;
  /** The facts a result carries in `data` (checked as the tool returns): callers read them with this schema, never by hand. */
  output: z.ZodType<D>;
  readOnly: boolean;
  // NoInfer: D comes from the output schema alone, so a run that returns other data is a type error.
  run: (input: I, ctx: ToolContext) => Promise<ToolResult<NoInfer<D>>>;
  namespace?: string;
  version?: string;
}

export function defineTool<I, D extends ToolData>(def: ToolDefinition<I, D>): Tool<I, D> {
  // The JSON Schemas are made when first read: a run's start defines every tool, and its first request
  // needs only the PM's few input schemas (the output schemas are for `acia tool` and bundles).
  let inputSchema: Record<string, unknown> | undefined;
  let outputSchema: Record<string, unknown> | undefined;
  const descriptor: ToolDescriptor = {
    provider: 'acia',
    namespace: def.namespace ?? 'acia.core',
    name: def.name,
    version: def.version ?? '1',
    description: def.description,
    get inputSchema() {
      return (inputSchema ??= z.toJSONSchema(def.input, { io: 'input' }));
    },
    get outputSchema() {
      return (outputSchema ??= resultSchema(z.toJSONSchema(def.output, { io: 'output' })));
    },
    sideEffects: !def.readOnly,
  };
  return {
    name: def.name,
    description: def.description,
    input: def.input,
    output: def.output,
    readOnly: def.readOnly,
    descriptor,
    run: async (input, ctx) => {
      const result = await def.run(input, ctx);
      // What a tool says it returns is what it returns: a result that breaks its own schema is the tool's bug.
      if (result.data !== undefined) {
        const checked = def.output.safeParse(result.data);
        if (!checked.success) throw new AciaError('INTERNAL', `${def.name} returned data its output schema refuses: ${z.prettifyError(checked.error)}`);
      }
      return result;
    },
  };
}

/** A result's JSON Schema with this tool's `data`. */
function resultSchema(data: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _s, ...body } = data;
  return {
    type: 'object',
    properties: { ok: { type: 'boolean' }, forModel: { type: 'string' }, forDisplay: { type: 'string' }, data: body },
    required: ['ok', 'forModel', 'forDisplay'],
  };
}

/** A failed result the model can act on. */
export function toolError(message: string): ToolResult<never>;
export function toolError(message: string, data: ToolData): ToolResult;
export function toolError(message: string, data?: ToolData): ToolResult {
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
    const message = `${tool.name} failed: ${errorMessage(e)}`;
    return typeof code === 'string' ? toolError(message, { errorCode: code }) : toolError(message);
  }
}
