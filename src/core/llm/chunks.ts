// Stamps StreamChunks with the request's run/step ids and a per-call sequence, so every client emits alike.
import type { RunId, Seq, StepId } from '../acm/ids.js';
import type { AssistantBlock, LlmCallOptions, LlmRequest } from './types.js';
import { withRetries, type LlmRetryPolicy, type Sleep } from './retry.js';

type ChunkBody =
  | { kind: 'token'; text: string }
  | { kind: 'tool_call'; toolUseId: string; toolName: string; input: unknown }
  | { kind: 'json_partial'; toolUseId?: string; partialJson: string }
  | { kind: 'status'; status: string; message?: string }
  | { kind: 'final'; result: unknown };

export type Emit = (body: ChunkBody) => void;

/** A no-op when the caller passed no onChunk; otherwise stamps and forwards. */
export function chunkEmitter(request: LlmRequest, options: LlmCallOptions | undefined): Emit {
  const onChunk = options?.onChunk;
  if (onChunk === undefined) return () => undefined;
  // Ids are validated where runs and steps are created; here they are only carried through.
  const runId = (request.runId ?? 'unscoped') as RunId;
  const stepId = (request.stepId ?? request.caller) as StepId;
  let seq = 0;
  return (body) => {
    onChunk({ ...body, runId, stepId, seq: seq++ as Seq });
  };
}

/** Emits what a whole response would have streamed: used by clients that hold a finished message. */
export function emitWhole(emit: Emit, content: readonly AssistantBlock[]): void {
  for (const block of content) {
    if (block.type === 'text') {
      if (block.text !== '') emit({ kind: 'token', text: block.text });
    } else {
      emit({ kind: 'tool_call', toolUseId: block.id, toolName: block.name, input: block.input });
    }
  }
}

/**
 * The body every client's complete() shares: one attempt function retried under the policy, with each
 * retry announced to the caller as a status chunk.
 */
export function completeWithRetries<R>(
  request: LlmRequest,
  options: LlmCallOptions | undefined,
  retry: { policy: LlmRetryPolicy; sleep: Sleep },
  attempt: (emit: Emit, signal: AbortSignal | undefined) => Promise<R>,
): Promise<R> {
  const emit = chunkEmitter(request, options);
  const signal = options?.signal;
  return withRetries(() => attempt(emit, signal), {
    policy: retry.policy,
    sleep: retry.sleep,
    signal,
    onRetry: (info) => emit({ kind: 'status', status: 'retrying', message: `${info.code}: ${info.message}` }),
  });
}
