// Writes a script turn as an OpenAI-compatible /v1/chat/completions reply (SSE chunks or one JSON),
// including the body-level faults, so the OpenAI adapter is tested against the same scripts.
import type { ServerResponse } from 'node:http';
import { brokenToolJson, splitPieces } from './script.js';
import type { TurnReply } from './fake-anthropic-wire.js';
import { SseWriter } from './fake-sse.js';

const FINISH: Record<string, string> = { end_turn: 'stop', tool_use: 'tool_calls', max_tokens: 'length', refusal: 'content_filter' };

export function openAiErrorBody(type: string, message: string, code: string | null): string {
  return JSON.stringify({ error: { message, type, param: null, code } });
}

export function writeOpenAiJson(res: ServerResponse, reply: TurnReply): void {
  const { turn } = reply;
  if (turn.fault === 'cut_stream' || turn.fault === 'cut_tool_input') {
    res.destroy();
    return;
  }
  const empty = turn.fault === 'empty';
  const toolCalls = empty
    ? []
    : turn.toolCalls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: turn.fault === 'malformed_tool_json' ? brokenToolJson(c.input) : JSON.stringify(c.input) },
      }));
  res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': reply.requestId });
  res.end(
    JSON.stringify({
      id: reply.messageId,
      object: 'chat.completion',
      created: 0,
      model: reply.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: empty || turn.text === '' ? null : turn.text, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
          finish_reason: empty ? 'stop' : FINISH[turn.stopReason],
        },
      ],
      usage: usageJson(reply),
    }),
  );
}

export async function writeOpenAiStream(res: ServerResponse, reply: TurnReply, includeUsage: boolean): Promise<void> {
  const { turn } = reply;
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'x-request-id': reply.requestId });
  const empty = turn.fault === 'empty';
  const textPieces = empty ? [] : splitPieces(turn.text);
  const sse = new SseWriter(res, turn.latencyMs / (3 + textPieces.length + turn.toolCalls.length * 4));
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> => ({
    id: reply.messageId,
    object: 'chat.completion.chunk',
    created: 0,
    model: reply.model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  await sse.event(null, chunk({ role: 'assistant', content: '' }));
  for (const [i, piece] of textPieces.entries()) {
    await sse.event(null, chunk({ content: piece }));
    if (turn.fault === 'cut_stream' && i >= Math.floor((textPieces.length - 1) / 2)) return sse.cut();
  }
  if (turn.fault === 'cut_stream') return sse.cut();
  for (const [index, call] of (empty ? [] : turn.toolCalls).entries()) {
    const args = turn.fault === 'malformed_tool_json' ? brokenToolJson(call.input) : JSON.stringify(call.input);
    await sse.event(null, chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    const pieces = splitPieces(args);
    for (const [i, piece] of pieces.entries()) {
      await sse.event(null, chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
      if (turn.fault === 'cut_tool_input' && i >= Math.max(0, pieces.length - 2)) return sse.cut();
    }
  }
  if (turn.fault === 'cut_tool_input') return sse.cut();
  await sse.event(null, chunk({}, empty ? 'stop' : (FINISH[turn.stopReason] ?? 'stop')));
  if (includeUsage) {
    await sse.event(null, { id: reply.messageId, object: 'chat.completion.chunk', created: 0, model: reply.model, choices: [], usage: usageJson(reply) });
  }
  await sse.event(null, '[DONE]');
  res.end();
}

function usageJson(reply: TurnReply): Record<string, unknown> {
  const u = reply.usage;
  const prompt = u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens;
  return {
    prompt_tokens: prompt,
    completion_tokens: u.outputTokens,
    total_tokens: prompt + u.outputTokens,
    prompt_tokens_details: { cached_tokens: u.cacheReadTokens },
  };
}
