// The in-process scripted model: serves script turns as streamed LlmResponses, with faults retried
// through the same loop the real adapters use, so the agent loop sees what it would see in production.
import { AciaError } from '../errors.js';
import { completeWithRetries, type Emit } from './chunks.js';
import { estimateRequestTokens, estimateTokens } from './pricing.js';
import {
  DEFAULT_RETRY_POLICY,
  RetryableFailure,
  abortedError,
  realSleep,
  type LlmRetryPolicy,
  type Sleep,
} from './retry.js';
import { ScriptEngine, brokenToolJson, splitPieces, type Script, type ServedTurn } from './script.js';
import type { AssistantBlock, LlmCallOptions, LlmClient, LlmRequest, LlmResponse } from './types.js';

export interface ScriptedClientOptions {
  sleep?: Sleep;
  retry?: Partial<LlmRetryPolicy>;
}

export class ScriptedClient implements LlmClient {
  readonly provider = 'scripted';
  readonly engine: ScriptEngine;
  private readonly sleep: Sleep;
  private readonly policy: LlmRetryPolicy;

  constructor(script: Script | ScriptEngine, options: ScriptedClientOptions = {}) {
    this.engine = script instanceof ScriptEngine ? script : new ScriptEngine(script);
    this.sleep = options.sleep ?? realSleep;
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  }

  complete(request: LlmRequest, options?: LlmCallOptions): Promise<LlmResponse> {
    return completeWithRetries(request, options, { policy: this.policy, sleep: this.sleep }, (emit, signal) => this.attempt(request, emit, signal));
  }

  private async attempt(request: LlmRequest, emit: Emit, signal: AbortSignal | undefined): Promise<LlmResponse> {
    const turn = this.engine.next(request.caller);
    const what = `scripted ${turn.fault ?? ''} for "${turn.caller}" (turn ${turn.ordinal})`;
    switch (turn.fault) {
      case '429':
        throw new RetryableFailure('LLM_RATE_LIMITED', `rate limited: ${what}`, secondsToMs(turn.retryAfterS));
      case '529':
        throw new RetryableFailure('LLM_OVERLOADED', `overloaded: ${what}`, secondsToMs(turn.retryAfterS));
      case '500':
        throw new RetryableFailure('LLM_SERVER', `server error: ${what}`, secondsToMs(turn.retryAfterS));
      case '401':
        throw new AciaError('LLM_AUTH', `authentication failed: ${what}`);
      case 'garbage_body':
        throw new AciaError('LLM_BAD_RESPONSE', `model endpoint returned a non-JSON body: ${what}`);
      default:
        break;
    }
    const pace = this.pacer(turn, signal);
    if (turn.fault === 'cut_stream') {
      const half = turn.text.slice(0, Math.ceil(turn.text.length / 2));
      if (half !== '') emit({ kind: 'token', text: half });
      await pace();
      throw new RetryableFailure('LLM_STREAM_CUT', `stream cut mid text: ${what}`);
    }
    const content: AssistantBlock[] = [];
    if (turn.fault !== 'empty') {
      for (const piece of splitPieces(turn.text)) {
        await pace();
        emit({ kind: 'token', text: piece });
      }
      if (turn.text !== '') content.push({ type: 'text', text: turn.text });
      for (const call of turn.toolCalls) {
        const json = turn.fault === 'malformed_tool_json' ? brokenToolJson(call.input) : JSON.stringify(call.input);
        const pieces = splitPieces(json);
        const sent = turn.fault === 'cut_tool_input' ? pieces.slice(0, Math.max(1, pieces.length - 1)) : pieces;
        for (const piece of sent) {
          await pace();
          emit({ kind: 'json_partial', toolUseId: call.id, partialJson: piece });
        }
        if (turn.fault === 'cut_tool_input') {
          throw new RetryableFailure('LLM_STREAM_CUT', `stream cut mid tool input: ${what}`);
        }
        if (turn.fault === 'malformed_tool_json') {
          throw new RetryableFailure('LLM_BAD_RESPONSE', `tool_use "${call.name}" input is not valid JSON: ${what}`);
        }
        emit({ kind: 'tool_call', toolUseId: call.id, toolName: call.name, input: call.input });
        content.push({ type: 'tool_use', id: call.id, name: call.name, input: call.input });
      }
    }
    await pace();
    const outputText = content.map((b) => (b.type === 'text' ? b.text : JSON.stringify(b.input))).join('');
    const response: LlmResponse = {
      content,
      stopReason: turn.fault === 'empty' ? 'end_turn' : turn.stopReason,
      usage: {
        inputTokens: turn.usage?.inputTokens ?? estimateRequestTokens(request),
        outputTokens: turn.usage?.outputTokens ?? estimateTokens(outputText),
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      },
      model: this.engine.script.model ?? request.model,
      requestId: `req_scripted_${turn.caller.replace(/[^A-Za-z0-9]/g, '_')}_${turn.ordinal}`,
    };
    emit({ kind: 'final', result: response });
    return response;
  }

  /** Spreads the turn's latency over its streamed pieces; checks for abort between them. */
  private pacer(turn: ServedTurn, signal: AbortSignal | undefined): () => Promise<void> {
    const pieces = Math.max(
      1,
      splitPieces(turn.text).length + turn.toolCalls.reduce((n, c) => n + splitPieces(JSON.stringify(c.input)).length, 0) + 1,
    );
    const step = turn.latencyMs / pieces;
    return async () => {
      if (signal?.aborted) throw abortedError();
      if (step > 0) await this.sleep(step, signal);
    };
  }
}

function secondsToMs(s: number | undefined): number | undefined {
  return s === undefined ? undefined : s * 1000;
}
