// The chaos model (`--model chaos:<script>[,seed=N,rate=R]`): a scripted model whose turns are
// perturbed the way real models fail, to measure whether the team recovers and stays truthful.
//
// A perturbation is *inserted* before the scripted turn it would have replaced: the faulty reply is
// served, and the next request from that caller gets the scripted turn, as a real model that sees its
// error and tries again. A premature `return_result` ends the agent early; the scripted turns it
// skipped are then served to the next agent of the same role that has none left (the fix task the
// team creates after the failed verification), as a real model would finish the work when told. A
// verifier with no scripted turns left runs the tests and reports what they said.
import { createHash } from 'node:crypto';
import { AciaError } from '../errors.js';
import { completeWithRetries, emitWhole } from './chunks.js';
import { estimateRequestTokens, estimateTokens } from './pricing.js';
import { DEFAULT_RETRY_POLICY, realSleep, type Sleep } from './retry.js';
import type { ScriptTurn } from './script.js';
import type { ScriptedClient } from './scripted-client.js';
import type { AssistantBlock, LlmCallOptions, LlmClient, LlmRequest, LlmResponse } from './types.js';

export const CHAOS_KINDS = [
  'invalid_tool_input',
  'missing_path',
  'absent_anchor',
  'text_instead',
  'max_tokens_cut',
  'repeated_call',
  'premature_success',
] as const;
export type ChaosKind = (typeof CHAOS_KINDS)[number];

export interface ChaosSpec {
  script: string;
  seed: number;
  rate: number;
}

export const DEFAULT_CHAOS_RATE = 0.15;

/** Parses the part after `chaos:`: `<script>[,seed=N][,rate=R]`. */
export function parseChaosSpec(rest: string): ChaosSpec {
  const parts = rest.split(',');
  const script = parts[0] ?? '';
  if (script === '') throw new AciaError('CONFIG_INVALID', `model "chaos:${rest}": expected chaos:<script>[,seed=N,rate=R]`);
  let seed = 1;
  let rate = DEFAULT_CHAOS_RATE;
  for (const p of parts.slice(1)) {
    const m = /^(seed|rate)=(.+)$/.exec(p);
    const n = m ? Number(m[2]) : NaN;
    if (m?.[1] === 'seed' && Number.isSafeInteger(n) && n >= 0) seed = n;
    else if (m?.[1] === 'rate' && Number.isFinite(n) && n >= 0 && n <= 1) rate = n;
    else throw new AciaError('CONFIG_INVALID', `model "chaos:${rest}": bad option "${p}" (expected seed=<whole number> or rate=<0..1>)`);
  }
  return { script, seed, rate };
}

export interface Injection {
  caller: string;
  /** 1-based index of the request from this caller. */
  call: number;
  kind: ChaosKind;
}

/** A number in [0, 1) from the seed and a label: the same seed perturbs the same calls, whatever the timing. */
export function seededUnit(seed: number, label: string): number {
  const h = createHash('sha256').update(`${seed}\u0000${label}`).digest();
  return h.readUInt32BE(0) / 0x1_0000_0000;
}

export class ChaosClient implements LlmClient {
  readonly provider = 'chaos';
  /** Every perturbation served, in order: the run's chaos log. */
  readonly injections: Injection[] = [];
  private readonly calls = new Map<string, number>();
  private readonly justPerturbed = new Set<string>();
  private readonly lastCalls = new Map<string, { name: string; input: Record<string, unknown> }[]>();
  /** Callers that returned early with scripted turns left, oldest first. */
  private readonly abandoned: string[] = [];
  private readonly sleep: Sleep;

  constructor(
    private readonly inner: ScriptedClient,
    private readonly spec: Pick<ChaosSpec, 'seed' | 'rate'>,
    options: { sleep?: Sleep } = {},
  ) {
    this.sleep = options.sleep ?? realSleep;
  }

  complete(request: LlmRequest, options?: LlmCallOptions): Promise<LlmResponse> {
    const caller = request.caller;
    const call = (this.calls.get(caller) ?? 0) + 1;
    this.calls.set(caller, call);
    const source = this.sourceFor(caller);
    const upcoming = this.inner.engine.peek(source);
    if (upcoming === null && caller.startsWith('qa:')) return this.honestVerifier(request, options, call);
    const perturb = upcoming !== null && !this.justPerturbed.has(caller) && seededUnit(this.spec.seed, `${caller}#${call}`) < this.spec.rate;
    if (!perturb) {
      this.justPerturbed.delete(caller);
      if (upcoming) this.lastCalls.set(caller, (upcoming.toolCalls ?? []).filter((c) => c.name !== 'return_result'));
      return this.inner.complete(source === caller ? request : { ...request, caller: source }, options);
    }
    this.justPerturbed.add(caller);
    const kind = CHAOS_KINDS[Math.floor(seededUnit(this.spec.seed, `${caller}#${call}:kind`) * CHAOS_KINDS.length)] ?? 'text_instead';
    this.injections.push({ caller, call, kind });
    if (kind === 'premature_success' && source === caller) this.abandoned.push(caller);
    const { content, stopReason } = this.faultyReply(kind, caller, call, upcoming);
    return this.respond(request, options, call, content, stopReason);
  }

  /**
   * A verifier the script has no turns for (a re-verification after a fix the script did not foresee):
   * it runs the tests, then reports what they said, as a real QA model would.
   */
  private honestVerifier(request: LlmRequest, options: LlmCallOptions | undefined, call: number): Promise<LlmResponse> {
    const last = request.messages.at(-1);
    const results = last?.role === 'user' && Array.isArray(last.content) ? last.content.filter((b) => b.type === 'tool_result') : [];
    const id = `toolu_chaos_${request.caller.replace(/[^A-Za-z0-9]/g, '_')}_${call}`;
    const ran = results.length > 0;
    const failed = results.some((r) => r.isError === true || /TESTS FAILED/.test(r.content));
    const content: AssistantBlock[] = ran
      ? [{ type: 'tool_use', id, name: 'return_result', input: { passed: !failed, summary: failed ? 'The suite fails.' : 'Ran the full suite.' } }]
      : [{ type: 'tool_use', id, name: 'run_tests', input: {} }];
    return this.respond(request, options, call, content, 'tool_use');
  }

  private respond(request: LlmRequest, options: LlmCallOptions | undefined, call: number, content: AssistantBlock[], stopReason: LlmResponse['stopReason']): Promise<LlmResponse> {
    return completeWithRetries(request, options, { policy: DEFAULT_RETRY_POLICY, sleep: this.sleep }, (emit) => {
      emitWhole(emit, content);
      const outputText = content.map((b) => (b.type === 'text' ? b.text : JSON.stringify(b.input))).join('');
      const response: LlmResponse = {
        content,
        stopReason,
        usage: { inputTokens: estimateRequestTokens(request), outputTokens: estimateTokens(outputText), cacheReadTokens: 0, cacheWriteTokens: 0 },
        model: this.inner.engine.script.model ?? request.model,
        requestId: `req_chaos_${request.caller.replace(/[^A-Za-z0-9]/g, '_')}_${call}`,
      };
      emit({ kind: 'final', result: response });
      return Promise.resolve(response);
    });
  }

  /** The caller whose scripted turns serve `caller`: itself, or an abandoned agent of the same role. */
  private sourceFor(caller: string): string {
    if (this.inner.engine.peek(caller) !== null) return caller;
    const role = caller.split(':')[0];
    const heir = this.abandoned.find((a) => a.split(':')[0] === role && this.inner.engine.peek(a) !== null);
    return heir ?? caller;
  }

  private faultyReply(kind: ChaosKind, caller: string, call: number, upcoming: ScriptTurn): { content: AssistantBlock[]; stopReason: LlmResponse['stopReason'] } {
    const id = `toolu_chaos_${caller.replace(/[^A-Za-z0-9]/g, '_')}_${call}`;
    const tool = (name: string, input: Record<string, unknown>): { content: AssistantBlock[]; stopReason: LlmResponse['stopReason'] } => ({
      content: [{ type: 'tool_use', id, name, input }],
      stopReason: 'tool_use',
    });
    const planned = (upcoming.toolCalls ?? []).find((c) => c.name !== 'return_result');
    switch (kind) {
      case 'invalid_tool_input':
        return tool(planned?.name ?? 'read_file', { path: 42, unexpected: true });
      case 'missing_path':
        return tool('read_file', { path: `src/no-such-file-${call}.js` });
      case 'absent_anchor':
        return tool('edit_file', { path: 'package.json', old: 'text that is not in this file (chaos)', new: 'x' });
      case 'text_instead':
        return { content: [{ type: 'text', text: 'I will now make the change and then report back.' }], stopReason: 'end_turn' };
      case 'max_tokens_cut': {
        const text = upcoming.text !== undefined && upcoming.text !== '' ? upcoming.text : 'Let me look at the relevant files and then edit the';
        return { content: [{ type: 'text', text: text.slice(0, Math.max(1, Math.floor(text.length / 2))) }], stopReason: 'max_tokens' };
      }
      case 'repeated_call': {
        const last = this.lastCalls.get(caller) ?? [];
        const calls = last.length > 0 ? last : [{ name: 'list_dir', input: { path: '.' } }];
        return { content: calls.map((c, i) => ({ type: 'tool_use' as const, id: `${id}_${i}`, name: c.name, input: c.input })), stopReason: 'tool_use' };
      }
      case 'premature_success': {
        const role = caller.split(':')[0];
        const input = role === 'qa' ? { passed: true, summary: 'All tests pass.' } : role === 'dev' ? { summary: 'Done: the change is complete and tested.' } : { summary: 'Done.' };
        return tool('return_result', input);
      }
    }
  }
}
