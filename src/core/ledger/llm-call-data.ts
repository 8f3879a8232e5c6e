// LLM_CALL's payload, in both versions: version 1 stored every request whole as a blob; version 2 may
// carry it as a delta of the session's previous request and a small response inline.
import { z } from 'zod';
import { RequestDelta } from './request-delta.js';

/** A content address: the blob of that sha256. */
export const BlobRef = z.string().regex(/^sha256:[0-9a-f]{64}$/);
const UsageData = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheReadTokens: z.number(),
  cacheWriteTokens: z.number(),
});
/** LLM_CALL, version 1: the request always stored whole, as the blob its requestHash names. */
export const LlmCallV1 = z.object({
  taskId: z.string().optional(),
  caller: z.string(),
  model: z.string(),
  /** Content address of the model-visible request: the blob it names, or rebuilt from `request` (version 2). */
  requestHash: BlobRef,
  responseRef: BlobRef,
  usage: UsageData,
  costUsd: z.number().nullable(),
  stopReason: z.string(),
  durationMs: z.number(),
  /** The role whose agent made the call (absent in runs made before roles were files). */
  role: z.string().optional(),
});

/** LLM_CALL, version 2 (the current one). */
export const LlmCallV2 = LlmCallV1.extend({
  /**
   * The request as the agent's previous request plus its new messages (request-delta.ts); absent when the
   * request is stored whole as the blob `requestHash` names.
   */
  request: RequestDelta.optional(),
  /** The response's bytes (the blob responseRef addresses) when small: no blob file is written (inline-blobs.ts). */
  response: z.string().optional(),
});
