// Record/replay: RecordingClient stores each response as a blob keyed by the model-visible request's
// hash; ReplayClient serves those responses back and fails loudly when a run asks something new.
import { z } from 'zod';
import { canonicalJson, contentAddress } from '../acm/canonical-json.js';
import { AciaError, errorMessage } from '../errors.js';
import { chunkEmitter, emitWhole } from './chunks.js';
import type { LlmCallOptions, LlmClient, LlmRequest, LlmResponse } from './types.js';

/** Hash of what the model sees — not caller, run or step ids, which do not change its answer. */
export function requestHash(req: LlmRequest): `sha256:${string}` {
  return contentAddress({
    model: req.model,
    system: req.system,
    tools: req.tools,
    messages: req.messages,
    maxTokens: req.maxTokens,
    temperature: req.temperature ?? null,
  });
}

/** Where responses go; RunLedger satisfies it. */
export interface BlobSink {
  putBlob(content: string): Promise<string>;
}

export interface CallRecord {
  caller: string;
  requestHash: string;
  responseRef: string;
}

export class RecordingClient implements LlmClient {
  readonly provider: string;

  constructor(
    private readonly inner: LlmClient,
    private readonly sink: BlobSink,
    private readonly onRecord?: (record: CallRecord) => void,
  ) {
    this.provider = inner.provider;
  }

  async complete(request: LlmRequest, options?: LlmCallOptions): Promise<LlmResponse> {
    const response = await this.inner.complete(request, options);
    const { recording: _ignored, ...plain } = response;
    const responseRef = await this.sink.putBlob(canonicalJson(plain));
    const hash = requestHash(request);
    this.onRecord?.({ caller: request.caller, requestHash: hash, responseRef });
    return { ...plain, recording: { requestHash: hash, responseRef } };
  }
}

export type ReplayLookup = (requestHash: string) => LlmResponse | undefined | Promise<LlmResponse | undefined>;

export class ReplayClient implements LlmClient {
  readonly provider = 'replay';

  constructor(private readonly lookup: ReplayLookup) {}

  async complete(request: LlmRequest, options?: LlmCallOptions): Promise<LlmResponse> {
    const hash = requestHash(request);
    const response = await this.lookup(hash);
    if (response === undefined) {
      throw new AciaError('REPLAY_DIVERGED', `replay diverged: caller "${request.caller}" sent request ${hash}, which the recording does not have`, {
        hint: 'the code, prompts or repository changed since the run was recorded',
      });
    }
    const emit = chunkEmitter(request, options);
    emitWhole(emit, response.content);
    emit({ kind: 'final', result: response });
    return response;
  }
}

const RecordedResponse = z.object({
  content: z.array(
    z.discriminatedUnion('type', [
      z.object({ type: z.literal('text'), text: z.string() }),
      z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.unknown() }),
    ]),
  ),
  stopReason: z.enum(['end_turn', 'tool_use', 'max_tokens', 'stop_sequence', 'refusal', 'other']),
  usage: z.object({
    inputTokens: z.number(),
    outputTokens: z.number(),
    cacheReadTokens: z.number(),
    cacheWriteTokens: z.number(),
  }),
  model: z.string(),
  requestId: z.string().nullable(),
});

/** Parses a stored response blob; a corrupt blob is LEDGER_CORRUPT, not a crash mid-replay. */
export function parseRecordedResponse(blob: string, ref = 'blob'): LlmResponse {
  try {
    return RecordedResponse.parse(JSON.parse(blob));
  } catch (e) {
    throw new AciaError('LEDGER_CORRUPT', `${ref} is not a recorded model response: ${errorMessage(e)}`);
  }
}

/**
 * Builds a lookup from recorded calls in order. The same request asked twice is served its
 * recorded answers in order; asking it more often than recorded is a divergence.
 */
export async function replayLookup(
  records: readonly { requestHash: string; responseRef: string }[],
  getBlob: (ref: string) => Promise<string | Uint8Array>,
): Promise<ReplayLookup> {
  const queues = new Map<string, LlmResponse[]>();
  for (const r of records) {
    const raw = await getBlob(r.responseRef);
    const text = typeof raw === 'string' ? raw : Buffer.from(raw).toString('utf8');
    const queue = queues.get(r.requestHash) ?? [];
    queue.push(parseRecordedResponse(text, r.responseRef));
    queues.set(r.requestHash, queue);
  }
  return (hash) => queues.get(hash)?.shift();
}
