// Writes a script turn as OpenAI's Responses API would (`POST /v1/responses`): the SSE events Codex reads
// (response.created, output_item.added / output_text.delta / output_item.done, response.completed with
// usage) or the response object whole, including the body-level faults. A scripted tool call becomes a
// `custom_tool_call` (its `input` string as the freeform input) when the request declares that tool as
// `custom` (Codex's apply_patch), else a `function_call` with JSON arguments.
import type { ServerResponse } from 'node:http';
import { brokenToolJson, splitPieces } from './script.js';
import type { TurnReply } from './fake-anthropic-wire.js';
import { SseWriter } from './fake-sse.js';

type Item = Record<string, unknown> & { type: string; id: string };

export function writeResponsesJson(res: ServerResponse, reply: TurnReply, body: Record<string, unknown>): void {
  if (reply.turn.fault === 'cut_stream' || reply.turn.fault === 'cut_tool_input') {
    res.destroy();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': reply.requestId });
  res.end(JSON.stringify(responseObject(reply, itemsOf(reply, body), 'completed')));
}

export async function writeResponsesStream(res: ServerResponse, reply: TurnReply, body: Record<string, unknown>): Promise<void> {
  const { turn } = reply;
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'x-request-id': reply.requestId });
  const items = itemsOf(reply, body);
  const textPieces = turn.fault === 'empty' ? [] : splitPieces(turn.text);
  const sse = new SseWriter(res, turn.latencyMs / (3 + textPieces.length + items.length * 2));
  const event = (type: string, data: Record<string, unknown>) => sse.event(type, { type, ...data });
  await event('response.created', { response: responseObject(reply, [], 'in_progress') });
  for (const [index, item] of items.entries()) {
    if (item.type === 'message') {
      await event('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', content: [] } });
      for (const [i, delta] of textPieces.entries()) {
        await event('response.output_text.delta', { item_id: item.id, output_index: index, content_index: 0, delta });
        if (turn.fault === 'cut_stream' && i >= Math.floor((textPieces.length - 1) / 2)) return sse.cut();
      }
    } else {
      if (turn.fault === 'cut_tool_input') return sse.cut();
      await event('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress' } });
    }
    await event('response.output_item.done', { output_index: index, item });
  }
  if (turn.fault === 'cut_stream' || turn.fault === 'cut_tool_input') return sse.cut();
  await event('response.completed', { response: responseObject(reply, items, 'completed') });
  res.end();
}

/** The turn's output items: its text as one message, then its tool calls. */
function itemsOf(reply: TurnReply, body: Record<string, unknown>): Item[] {
  const { turn } = reply;
  if (turn.fault === 'empty') return [];
  const items: Item[] = [];
  if (turn.text !== '') items.push({ type: 'message', id: `msg_${reply.messageId}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: turn.text, annotations: [] }] });
  const custom = new Set(
    (Array.isArray(body.tools) ? (body.tools as unknown[]) : []).flatMap((t) => (typeof t === 'object' && t !== null && (t as { type?: unknown }).type === 'custom' ? [String((t as { name?: unknown }).name)] : [])),
  );
  for (const c of turn.toolCalls) {
    if (custom.has(c.name)) {
      const input = typeof c.input.input === 'string' ? c.input.input : JSON.stringify(c.input);
      items.push({ type: 'custom_tool_call', id: `ctc_${c.id}`, call_id: c.id, name: c.name, input, status: 'completed' });
    } else {
      const args = turn.fault === 'malformed_tool_json' ? brokenToolJson(c.input) : JSON.stringify(c.input);
      items.push({ type: 'function_call', id: `fc_${c.id}`, call_id: c.id, name: c.name, arguments: args, status: 'completed' });
    }
  }
  return items;
}

function responseObject(reply: TurnReply, output: Item[], status: 'in_progress' | 'completed'): Record<string, unknown> {
  const u = reply.usage;
  const max = reply.turn.stopReason === 'max_tokens' && status === 'completed';
  return {
    id: `resp_${reply.messageId}`,
    object: 'response',
    created_at: 0,
    model: reply.model,
    status: max ? 'incomplete' : status,
    incomplete_details: max ? { reason: 'max_output_tokens' } : null,
    output,
    usage:
      status === 'completed'
        ? {
            input_tokens: u.inputTokens + u.cacheReadTokens,
            input_tokens_details: { cached_tokens: u.cacheReadTokens },
            output_tokens: u.outputTokens,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: u.inputTokens + u.cacheReadTokens + u.outputTokens,
          }
        : null,
  };
}
