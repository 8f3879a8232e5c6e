// Writes a script turn as Anthropic's Messages API would: SSE events (message_start ... message_stop,
// with pings and split deltas) or one JSON message, including the body-level faults (cuts, broken JSON).
import type { ServerResponse } from 'node:http';
import { brokenToolJson, splitPieces, type ServedTurn } from './script.js';
import { SseWriter } from './fake-sse.js';

export interface WireUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export interface TurnReply {
  turn: ServedTurn;
  model: string;
  messageId: string;
  requestId: string;
  usage: WireUsage;
}

/** Anthropic's error JSON for a status fault. */
export function anthropicErrorBody(type: string, message: string, requestId: string): string {
  return JSON.stringify({ type: 'error', error: { type, message }, request_id: requestId });
}

export function writeAnthropicJson(res: ServerResponse, reply: TurnReply): void {
  const { turn } = reply;
  if (turn.fault === 'cut_stream' || turn.fault === 'cut_tool_input') {
    res.destroy();
    return;
  }
  const content: unknown[] = [];
  if (turn.fault !== 'empty') {
    if (turn.text !== '') content.push({ type: 'text', text: turn.text, citations: null });
    for (const c of turn.toolCalls) {
      // JSON cannot carry broken JSON in an object, so the malformed fault sends the input as a string.
      const input = turn.fault === 'malformed_tool_json' ? brokenToolJson(c.input) : c.input;
      content.push({ type: 'tool_use', id: c.id, name: c.name, input });
    }
  }
  res.writeHead(200, { 'content-type': 'application/json', 'request-id': reply.requestId });
  res.end(
    JSON.stringify({
      id: reply.messageId,
      type: 'message',
      role: 'assistant',
      model: reply.model,
      content,
      stop_reason: turn.fault === 'empty' ? 'end_turn' : turn.stopReason,
      stop_sequence: null,
      usage: usageJson(reply.usage),
    }),
  );
}

export async function writeAnthropicStream(res: ServerResponse, reply: TurnReply): Promise<void> {
  const { turn } = reply;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'request-id': reply.requestId,
  });
  const textPieces = turn.fault === 'empty' ? [] : splitPieces(turn.text);
  const toolPieces =
    turn.fault === 'empty'
      ? []
      : turn.toolCalls.map((c) => splitPieces(turn.fault === 'malformed_tool_json' ? brokenToolJson(c.input) : JSON.stringify(c.input)));
  const eventCount = 4 + textPieces.length + toolPieces.reduce((n, p) => n + p.length + 2, 0);
  const sse = new SseWriter(res, turn.latencyMs / eventCount);

  await sse.event('message_start', {
    type: 'message_start',
    message: {
      id: reply.messageId,
      type: 'message',
      role: 'assistant',
      model: reply.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usageJson(reply.usage), output_tokens: 1 },
    },
  });
  await sse.event('ping', { type: 'ping' });
  let index = 0;
  if (textPieces.length > 0) {
    await sse.event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '', citations: null } });
    for (const [i, piece] of textPieces.entries()) {
      await sse.event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
      if (turn.fault === 'cut_stream' && i >= Math.floor((textPieces.length - 1) / 2)) return sse.cut();
    }
    await sse.event('content_block_stop', { type: 'content_block_stop', index });
    index++;
  } else if (turn.fault === 'cut_stream') {
    return sse.cut();
  }
  for (const [t, call] of turn.toolCalls.entries()) {
    if (turn.fault === 'empty') break;
    const pieces = toolPieces[t] ?? [];
    await sse.event('content_block_start', {
      type: 'content_block_start',
      index,
      content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
    });
    for (const [i, piece] of pieces.entries()) {
      await sse.event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } });
      if (turn.fault === 'cut_tool_input' && i >= Math.max(0, pieces.length - 2)) return sse.cut();
    }
    await sse.event('content_block_stop', { type: 'content_block_stop', index });
    index++;
  }
  if (turn.fault === 'cut_tool_input') return sse.cut();
  await sse.event('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: turn.fault === 'empty' ? 'end_turn' : turn.stopReason, stop_sequence: null },
    usage: { output_tokens: reply.usage.outputTokens },
  });
  await sse.event('message_stop', { type: 'message_stop' });
  res.end();
}

function usageJson(u: WireUsage): Record<string, unknown> {
  return {
    input_tokens: u.inputTokens,
    output_tokens: u.outputTokens,
    cache_read_input_tokens: u.cacheReadTokens,
    cache_creation_input_tokens: u.cacheWriteTokens,
  };
}
