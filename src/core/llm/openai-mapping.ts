// Maps our LlmRequest to the `openai` SDK's chat-completions params and finish reasons back to ours.
import type {
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { LlmRequest, StopReason } from './types.js';

/**
 * The output cap's name: OpenAI's own API rejects `max_tokens` for its reasoning models and takes
 * `max_completion_tokens` for all; the local servers this adapter also serves (Ollama, LM Studio, older
 * vLLM) read only `max_tokens`.
 */
export type TokenLimitParam = 'max_tokens' | 'max_completion_tokens';

export function toChatParams(req: LlmRequest, tokenLimit: TokenLimitParam = 'max_tokens'): ChatCompletionCreateParamsStreaming {
  const messages: ChatCompletionMessageParam[] = req.system === '' ? [] : [{ role: 'system', content: req.system }];
  for (const m of req.messages) {
    if (typeof m.content === 'string') {
      messages.push({ role: m.role, content: m.content });
    } else if (m.role === 'user') {
      // Tool results must directly follow the assistant message that called them.
      for (const b of m.content) {
        if (b.type === 'tool_result') {
          messages.push({ role: 'tool', tool_call_id: b.toolUseId, content: b.isError === true ? `ERROR: ${b.content}` : b.content });
        }
      }
      const text = m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
      if (text !== '') messages.push({ role: 'user', content: text });
    } else {
      const text = m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
      const calls: ChatCompletionMessageFunctionToolCall[] = m.content.flatMap((b) =>
        b.type === 'tool_use' ? [{ id: b.id, type: 'function' as const, function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } }] : [],
      );
      messages.push({ role: 'assistant', content: text === '' ? null : text, ...(calls.length > 0 ? { tool_calls: calls } : {}) });
    }
  }
  const tools: ChatCompletionTool[] = req.tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.inputSchema },
  }));
  return {
    model: req.model,
    messages,
    [tokenLimit]: req.maxTokens,
    ...(tools.length > 0 ? { tools } : {}),
    ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    stream: true,
    stream_options: { include_usage: true },
  };
}

export function mapFinishReason(reason: string | null | undefined, hasToolCalls: boolean): StopReason {
  switch (reason) {
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    // Some local servers report "stop" even when the reply is a tool call.
    case 'stop':
      return hasToolCalls ? 'tool_use' : 'end_turn';
    case 'length':
      return 'max_tokens';
    case 'content_filter':
      return 'refusal';
    default:
      return hasToolCalls ? 'tool_use' : 'other';
  }
}
