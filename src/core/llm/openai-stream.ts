// Folds the `openai` SDK's streamed chat-completion chunks into our content blocks, emitting
// StreamChunks as pieces arrive. The SDK types the chunks but does not check them, and a local server
// may send anything, so every field is read as untrusted JSON.
import { AciaError } from '../errors.js';
import type { Emit } from './chunks.js';
import { mapFinishReason } from './openai-mapping.js';
import { parseToolInput } from './tool-input.js';
import type { AssistantBlock, StopReason, Usage } from './types.js';

interface ToolCallBuild {
  id: string;
  name: string;
  args: string;
}

type Json = Record<string, unknown>;

export class ChatStreamAssembly {
  model: string | undefined;
  usage: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  /** The last finish_reason seen; null until the model says it is done. */
  finish: string | null = null;
  private text = '';
  private readonly calls = new Map<number, ToolCallBuild>();

  constructor(private readonly emit: Emit) {}

  apply(chunk: unknown): void {
    if (!isJson(chunk)) throw new AciaError('LLM_BAD_RESPONSE', 'stream chunk is not a JSON object');
    if (typeof chunk['model'] === 'string') this.model = chunk['model'];
    if (isJson(chunk['usage'])) this.usage = mapUsage(chunk['usage']);
    const choices = chunk['choices'];
    const choice: unknown = Array.isArray(choices) ? choices[0] : undefined;
    if (!isJson(choice)) return;
    const delta = isJson(choice['delta']) ? choice['delta'] : {};
    const content = delta['content'];
    if (typeof content === 'string' && content !== '') {
      this.text += content;
      this.emit({ kind: 'token', text: content });
    }
    const toolCalls = delta['tool_calls'];
    if (Array.isArray(toolCalls)) {
      for (const tc of toolCalls) if (isJson(tc)) this.applyToolCall(tc);
    }
    if (typeof choice['finish_reason'] === 'string') this.finish = choice['finish_reason'];
  }

  /** Arguments arrive in pieces under one index; the id and name usually only in the first piece. */
  private applyToolCall(tc: Json): void {
    const index = typeof tc['index'] === 'number' ? tc['index'] : 0;
    const build = this.calls.get(index) ?? { id: '', name: '', args: '' };
    if (typeof tc['id'] === 'string' && tc['id'] !== '') build.id = tc['id'];
    const fn = isJson(tc['function']) ? tc['function'] : {};
    if (typeof fn['name'] === 'string') build.name += fn['name'];
    const args = fn['arguments'];
    if (typeof args === 'string' && args !== '') {
      build.args += args;
      this.emit({ kind: 'json_partial', toolUseId: build.id, partialJson: args });
    }
    this.calls.set(index, build);
  }

  /** The finished message; emits a tool_call chunk per call, whose input is parsed only now. */
  content(): AssistantBlock[] {
    const content: AssistantBlock[] = this.text === '' ? [] : [{ type: 'text', text: this.text }];
    for (const [index, c] of [...this.calls.entries()].sort(([a], [b]) => a - b)) {
      const id = c.id === '' ? `call_${index}` : c.id;
      const input = parseToolInput(c.name, c.args);
      this.emit({ kind: 'tool_call', toolUseId: id, toolName: c.name, input });
      content.push({ type: 'tool_use', id, name: c.name, input });
    }
    return content;
  }

  get stopReason(): StopReason {
    return mapFinishReason(this.finish, this.calls.size > 0);
  }
}

/** OpenAI counts cached tokens inside prompt_tokens; ours are disjoint, as Anthropic reports them. */
function mapUsage(u: Json): Usage {
  const num = (x: unknown): number => (typeof x === 'number' && Number.isFinite(x) && x > 0 ? x : 0);
  const details = u['prompt_tokens_details'];
  const cached = num(isJson(details) ? details['cached_tokens'] : undefined);
  return { inputTokens: Math.max(0, num(u['prompt_tokens']) - cached), outputTokens: num(u['completion_tokens']), cacheReadTokens: cached, cacheWriteTokens: 0 };
}

function isJson(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
