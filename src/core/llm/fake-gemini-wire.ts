// Writes a script turn as the Gemini API would: `streamGenerateContent?alt=sse` as SSE chunks (text in
// pieces, then one functionCall part per tool call, the last chunk with finishReason and usageMetadata),
// `streamGenerateContent` without `alt=sse` as a JSON array of those chunks, and `generateContent` as one
// response, including the body-level faults. Gemini CLI reads exactly these shapes through @google/genai.
import type { ServerResponse } from 'node:http';
import type { TurnReply } from './fake-anthropic-wire.js';
import { SseWriter } from './fake-sse.js';
import { splitPieces } from './script.js';

const FINISH: Record<string, string> = { end_turn: 'STOP', tool_use: 'STOP', max_tokens: 'MAX_TOKENS', refusal: 'SAFETY' };

export function geminiErrorBody(status: number, message: string): string {
  const name: Record<number, string> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE', 529: 'UNAVAILABLE' };
  return JSON.stringify({ error: { code: status, message, status: name[status] ?? 'UNKNOWN' } });
}

export async function writeGemini(res: ServerResponse, reply: TurnReply, how: 'sse' | 'array' | 'whole'): Promise<void> {
  const { turn } = reply;
  if (how !== 'sse' && (turn.fault === 'cut_stream' || turn.fault === 'cut_tool_input')) {
    res.destroy();
    return;
  }
  const chunks = chunksOf(reply, how === 'whole');
  if (how !== 'sse') {
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8', 'x-request-id': reply.requestId });
    res.end(JSON.stringify(how === 'array' ? chunks : chunks[0]));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': reply.requestId });
  const sse = new SseWriter(res, turn.latencyMs / Math.max(1, chunks.length));
  for (const [i, chunk] of chunks.entries()) {
    const last = i === chunks.length - 1;
    if (turn.fault === 'cut_stream' && i >= Math.floor(chunks.length / 2)) return sse.cut();
    if (turn.fault === 'cut_tool_input' && last) return sse.cut();
    await sse.event(null, chunk);
  }
  res.end();
}

/** The reply as stream chunks (or, `whole`, one response): text pieces, function calls, then the finish. */
function chunksOf(reply: TurnReply, whole: boolean): Record<string, unknown>[] {
  const { turn } = reply;
  const empty = turn.fault === 'empty';
  const text = empty ? [] : whole ? (turn.text === '' ? [] : [turn.text]) : splitPieces(turn.text);
  const calls = empty ? [] : turn.toolCalls.map((c) => ({ functionCall: { name: c.name, args: turn.fault === 'malformed_tool_json' ? { _: '{"broken' } : c.input } }));
  const parts: Record<string, unknown>[][] = whole ? [[...text.map((t) => ({ text: t })), ...calls]] : [...text.map((t) => [{ text: t }]), ...(calls.length > 0 ? [calls] : [])];
  if (parts.length === 0) parts.push([]);
  const u = reply.usage;
  const prompt = u.inputTokens + u.cacheReadTokens;
  return parts.map((p, i) => {
    const last = i === parts.length - 1;
    return {
      candidates: [{ content: { role: 'model', parts: p }, index: 0, ...(last ? { finishReason: empty ? 'STOP' : (FINISH[turn.stopReason] ?? 'STOP') } : {}) }],
      usageMetadata: {
        promptTokenCount: prompt,
        ...(u.cacheReadTokens > 0 ? { cachedContentTokenCount: u.cacheReadTokens } : {}),
        ...(last ? { candidatesTokenCount: u.outputTokens, totalTokenCount: prompt + u.outputTokens } : { totalTokenCount: prompt }),
      },
      modelVersion: reply.model,
      responseId: reply.messageId,
    };
  });
}
