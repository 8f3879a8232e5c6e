// The LlmClient contract: the only way agents talk to models. Provider adapters, the scripted model,
// and record/replay all implement it.
import type { StreamChunk } from '../acm/contracts.js';

export type JsonSchema = Record<string, unknown>;

export interface TextBlock {
  type: 'text';
  text: string;
}
export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}
export interface ToolResultBlock {
  type: 'tool_result';
  toolUseId: string;
  content: string;
  isError?: boolean;
}
export type AssistantBlock = TextBlock | ToolUseBlock;
export type UserBlock = TextBlock | ToolResultBlock;

export type Message =
  | { role: 'user'; content: string | UserBlock[] }
  | { role: 'assistant'; content: AssistantBlock[] };

export interface LlmToolSpec {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

export interface LlmRequest {
  /** Provider-local model id (no `anthropic:` prefix). */
  model: string;
  system: string;
  tools: LlmToolSpec[];
  messages: Message[];
  maxTokens: number;
  temperature?: number;
  /**
   * Who asks: `pm`, `dev:<task>`, `qa:<task>`. Scripted models match turns on it; real providers
   * ignore it. It is not part of the request hash's model-visible content but is recorded.
   */
  caller: string;
  /**
   * Index of the last message that is stable across turns (the task statement); adapters put a
   * cache breakpoint there in addition to system and tools. Undefined: cache system and tools only.
   */
  stableMessageIndex?: number;
  /** Ids stamped onto emitted StreamChunks. */
  runId?: string;
  stepId?: string;
}

export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'refusal' | 'other';

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export interface LlmResponse {
  content: AssistantBlock[];
  stopReason: StopReason;
  usage: Usage;
  model: string;
  requestId: string | null;
}

export interface LlmCallOptions {
  signal?: AbortSignal;
  /** Receives StreamChunks (token, json_partial, tool_call, status, final) as they arrive. */
  onChunk?: (chunk: StreamChunk) => void;
}

export interface LlmClient {
  /** `anthropic`, `openai`, `scripted`, `replay`, ... */
  readonly provider: string;
  /** Streams one model call; resolves to the whole message. Throws AciaError with an LLM_* code. */
  complete(request: LlmRequest, options?: LlmCallOptions): Promise<LlmResponse>;
}

export const ZERO_USAGE: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
