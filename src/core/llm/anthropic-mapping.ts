// Maps our LlmRequest to Anthropic Messages params (with prompt-cache breakpoints on the stable prefix)
// and Anthropic stop reasons back to ours.
import type {
  ContentBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  StopReason as AnthropicStopReason,
  TextBlockParam,
  Tool,
} from '@anthropic-ai/sdk/resources/messages/messages';
import type { LlmRequest, Message, StopReason } from './types.js';

const EPHEMERAL = { type: 'ephemeral' } as const;

/**
 * Breakpoints, in Anthropic's prefix order tools -> system -> messages: the last tool, the system
 * block, the last block of the message at `stableMessageIndex`, and the last block of the last message,
 * so each turn of an agent reads the whole conversation the previous turn wrote. At most the 4 allowed.
 */
export function toAnthropicParams(req: LlmRequest): MessageCreateParamsStreaming {
  const tools: Tool[] = req.tools.map((t, i) => ({
    name: t.name,
    description: t.description,
    input_schema: t.inputSchema as Tool['input_schema'],
    ...(i === req.tools.length - 1 ? { cache_control: EPHEMERAL } : {}),
  }));
  const system: TextBlockParam[] = req.system === '' ? [] : [{ type: 'text', text: req.system, cache_control: EPHEMERAL }];
  const messages = req.messages.map((m, i) => toMessageParam(m, i === req.stableMessageIndex || i === req.messages.length - 1));
  return {
    model: req.model,
    max_tokens: req.maxTokens,
    messages,
    ...(system.length > 0 ? { system } : {}),
    ...(tools.length > 0 ? { tools } : {}),
    ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    stream: true,
  };
}

function toMessageParam(m: Message, cacheBreakpoint: boolean): MessageParam {
  const blocks: ContentBlockParam[] =
    typeof m.content === 'string'
      ? [{ type: 'text', text: m.content }]
      : m.role === 'user'
        ? m.content.map((b) =>
            b.type === 'text'
              ? { type: 'text', text: b.text }
              : { type: 'tool_result', tool_use_id: b.toolUseId, content: b.content, ...(b.isError === true ? { is_error: true } : {}) },
          )
        : m.content
            // The API rejects empty text blocks; a model may well have produced one.
            .filter((b) => b.type !== 'text' || b.text !== '')
            .map((b) =>
              b.type === 'text'
                ? { type: 'text', text: b.text }
                : { type: 'tool_use', id: b.id, name: b.name, input: isPlainObject(b.input) ? b.input : {} },
            );
  if (!cacheBreakpoint) {
    if (typeof m.content === 'string') return { role: m.role, content: m.content };
    return { role: m.role, content: blocks };
  }
  const last = blocks.at(-1);
  if (last !== undefined && last.type !== 'thinking' && last.type !== 'redacted_thinking') {
    blocks[blocks.length - 1] = { ...last, cache_control: EPHEMERAL };
  }
  return { role: m.role, content: blocks };
}

export function mapStopReason(reason: AnthropicStopReason | null | undefined): StopReason {
  switch (reason) {
    case 'end_turn':
    case 'tool_use':
    case 'max_tokens':
    case 'stop_sequence':
    case 'refusal':
      return reason;
    // The output was cut by the context window: to the loop this is a truncated reply, like max_tokens.
    case 'model_context_window_exceeded':
      return 'max_tokens';
    default:
      return 'other';
  }
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
