// think(schema): a Thinkwell-style builder for one typed model task — prompt parts, typed tools, and a
// result delivered through a `return_result` tool validated against the zod schema.
import { z, type ZodType } from 'zod';
import { AciaError, errorMessage } from '../errors.js';
import type { LlmClient, LlmToolSpec, Message, ToolResultBlock, UserBlock } from './types.js';

const RETURN_RESULT = 'return_result';

interface ThinkTool {
  spec: LlmToolSpec;
  input: ZodType;
  handler: (input: unknown) => unknown;
}

export interface ThinkRunOptions {
  llm: LlmClient;
  model: string;
  caller?: string;
  /** Model calls before giving up (default 8). */
  maxTurns?: number;
  maxTokens?: number;
  system?: string;
  signal?: AbortSignal;
}

/**
 * One structured model call: build the prompt with `.text()`/`.quote()`, then `.run({ llm, model })` resolves to a
 * value of `schema`, or rejects with an AciaError once the reply cannot be repaired.
 */
export function think<T>(schema: ZodType<T>): ThinkBuilder<T> {
  return new ThinkBuilder(schema);
}

export class ThinkBuilder<T> {
  private readonly parts: string[] = [];
  private readonly tools = new Map<string, ThinkTool>();

  constructor(private readonly schema: ZodType<T>) {}

  text(s: string): this {
    this.parts.push(s);
    return this;
  }

  /** Quoted material is fenced and labelled, so the model reads it as data, not instructions. */
  quote(content: string, label = 'quote'): this {
    const fence = '`'.repeat(Math.max(3, longestRun(content, '`') + 1));
    this.parts.push(`<${label}>\n${fence}\n${content}\n${fence}\n</${label}>`);
    return this;
  }

  tool<I>(name: string, description: string, inputSchema: ZodType<I>, handler: (input: I) => unknown): this {
    if (name === RETURN_RESULT) throw new AciaError('INPUT_INVALID', `think(): "${RETURN_RESULT}" is reserved`);
    this.tools.set(name, {
      spec: { name, description, inputSchema: jsonSchemaOf(inputSchema) },
      input: inputSchema,
      handler: (input) => handler(input as I),
    });
    return this;
  }

  async run(options: ThinkRunOptions): Promise<T> {
    const { llm, model } = options;
    const caller = options.caller ?? 'think';
    const maxTurns = options.maxTurns ?? 8;
    const resultSchema = jsonSchemaOf(this.schema);
    const wrapped = resultSchema['type'] !== 'object';
    const returnTool: LlmToolSpec = {
      name: RETURN_RESULT,
      description: 'Deliver the final result. Call this exactly once, when done.',
      inputSchema: wrapped ? { type: 'object', properties: { result: resultSchema }, required: ['result'], additionalProperties: false } : resultSchema,
    };
    const tools = [...[...this.tools.values()].map((t) => t.spec), returnTool];
    const messages: Message[] = [{ role: 'user', content: `${this.parts.join('\n\n')}\n\nWhen done, call ${RETURN_RESULT} with the result.` }];
    let repaired = false;

    for (let turn = 0; turn < maxTurns; turn++) {
      const response = await llm.complete(
        {
          model,
          system: options.system ?? 'You complete one task and deliver its result through the return_result tool.',
          tools,
          messages,
          maxTokens: options.maxTokens ?? 4096,
          caller,
          stableMessageIndex: 0,
        },
        options.signal ? { signal: options.signal } : {},
      );
      messages.push({ role: 'assistant', content: response.content });
      const calls = response.content.flatMap((b) => (b.type === 'tool_use' ? [b] : []));
      if (calls.length === 0) {
        messages.push({ role: 'user', content: `Reply by calling a tool; deliver the result with ${RETURN_RESULT}.` });
        continue;
      }
      const results: UserBlock[] = [];
      for (const call of calls) {
        if (call.name === RETURN_RESULT) {
          const raw = wrapped && isRecord(call.input) ? call.input['result'] : call.input;
          const parsed = this.schema.safeParse(raw);
          if (parsed.success) return parsed.data;
          if (repaired) {
            throw new AciaError('LLM_PROTOCOL', `think(): ${RETURN_RESULT} from "${caller}" still invalid after one repair: ${z.prettifyError(parsed.error)}`);
          }
          repaired = true;
          results.push(toolError(call.id, `Invalid result; fix it and call ${RETURN_RESULT} again:\n${z.prettifyError(parsed.error)}`));
          continue;
        }
        results.push(await this.callTool(call.id, call.name, call.input));
      }
      messages.push({ role: 'user', content: results });
    }
    throw new AciaError('LLM_PROTOCOL', `think(): "${caller}" did not call ${RETURN_RESULT} within ${maxTurns} model turns`);
  }

  private async callTool(id: string, name: string, input: unknown): Promise<ToolResultBlock> {
    const tool = this.tools.get(name);
    if (tool === undefined) {
      return toolError(id, `Unknown tool "${name}". Available: ${[...this.tools.keys(), RETURN_RESULT].join(', ')}`);
    }
    const parsed = tool.input.safeParse(input);
    if (!parsed.success) return toolError(id, `Invalid input for ${name}:\n${z.prettifyError(parsed.error)}`);
    try {
      const out = await tool.handler(parsed.data);
      return { type: 'tool_result', toolUseId: id, content: typeof out === 'string' ? out : JSON.stringify(out ?? null) };
    } catch (e) {
      return toolError(id, `${name} failed: ${errorMessage(e)}`);
    }
  }
}

function toolError(id: string, content: string): ToolResultBlock {
  return { type: 'tool_result', toolUseId: id, content, isError: true };
}

function jsonSchemaOf(schema: ZodType): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function longestRun(s: string, ch: string): number {
  let best = 0;
  let run = 0;
  for (const c of s) {
    run = c === ch ? run + 1 : 0;
    best = Math.max(best, run);
  }
  return best;
}
