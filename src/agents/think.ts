// think(schema): a Thinkwell-style builder for one typed model task — prompt parts, typed tools, and a
// result delivered through a `return_result` tool validated against the zod schema. It runs on the one
// agent loop (runAgent), so its repair rules, loop guard and context handling are the agents'.
import { z, type ZodType } from 'zod';
import { AciaError, errorMessage } from '../core/errors.js';
import type { LlmClient, LlmToolSpec } from '../core/llm/types.js';
import type { ToolResult } from '../core/tools/types.js';
import { RETURN_RESULT, runAgent, type AgentToolbox } from './agent-loop.js';

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
    const caller = options.caller ?? 'think';
    const toolbox: AgentToolbox = {
      specs: [...this.tools.values()].map((t) => t.spec),
      // A handler's side effects are unknown: calls in one turn run one after another.
      readOnly: () => false,
      invoke: (call) => this.callTool(call.name, call.input),
    };
    const outcome = await runAgent({
      llm: options.llm,
      model: options.model,
      caller,
      system: options.system ?? 'You complete one task and deliver its result through the return_result tool.',
      task: `${this.parts.join('\n\n')}\n\nWhen done, call ${RETURN_RESULT} with the result.`,
      output: this.schema,
      toolbox,
      maxTurns: options.maxTurns ?? 8,
      maxTokens: options.maxTokens ?? 4096,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (outcome.kind === 'returned') return outcome.result;
    throw new AciaError('LLM_PROTOCOL', `think(): "${caller}" ended ${outcome.kind}: ${outcome.message}`);
  }

  private async callTool(name: string, input: unknown): Promise<ToolResult> {
    const tool = this.tools.get(name);
    if (tool === undefined) {
      return toolError(`Unknown tool "${name}". Available: ${[...this.tools.keys(), RETURN_RESULT].join(', ')}`);
    }
    const parsed = tool.input.safeParse(input);
    if (!parsed.success) return toolError(`Invalid input for ${name}:\n${z.prettifyError(parsed.error)}`);
    try {
      const out = await tool.handler(parsed.data);
      const text = typeof out === 'string' ? out : JSON.stringify(out ?? null);
      return { ok: true, forModel: text, forDisplay: text };
    } catch (e) {
      return toolError(`${name} failed: ${errorMessage(e)}`);
    }
  }
}

function toolError(message: string): ToolResult {
  return { ok: false, forModel: message, forDisplay: message };
}

function jsonSchemaOf(schema: ZodType): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
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
