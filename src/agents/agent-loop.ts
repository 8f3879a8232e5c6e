// The one turn loop every agent runs: call the model, run its tool calls, feed the results back, and
// end when it delivers a valid result through `return_result`. How it ends is a closed union.
import { z, type ZodType } from 'zod';
import { AciaError, isAciaError } from '../core/errors.js';
import type { StreamChunk } from '../core/acm/contracts.js';
import type { LlmClient, LlmRequest, LlmResponse, LlmToolSpec, Message, ToolResultBlock, ToolUseBlock } from '../core/llm/types.js';
import type { ToolResult } from '../core/tools/types.js';
import { frozenJson } from '../core/acm/canonical-json.js';
import { elideOldToolOutput } from './context-window.js';
import { LOOP_STOP_AT, LoopGuard } from './loop-guard.js';
import { appendToLastUser, type AgentInbox } from './inbox.js';

export const RETURN_RESULT = 'return_result';

export type AgentOutcome<O> =
  | { kind: 'returned'; result: O; turns: number }
  | { kind: 'loop_detected'; turns: number; message: string }
  | { kind: 'max_turns'; turns: number; message: string }
  | { kind: 'protocol_error'; turns: number; message: string }
  | { kind: 'refused'; turns: number; message: string };

export interface ToolCall {
  id: string;
  name: string;
  input: unknown;
}

/** The tools an agent can reach; the team implements `invoke` (recording, sandbox, replay). */
export interface AgentToolbox {
  specs: readonly LlmToolSpec[];
  readOnly(name: string): boolean;
  invoke(call: ToolCall): Promise<ToolResult>;
}

export interface AgentRunOptions<O> {
  llm: LlmClient;
  model: string;
  caller: string;
  system: string;
  task: string;
  output: ZodType<O>;
  toolbox: AgentToolbox;
  maxTurns: number;
  maxTokens: number;
  /** Conversation budget before old tool output is elided (estimated tokens). */
  contextTokens?: number;
  signal?: AbortSignal;
  onChunk?: (chunk: StreamChunk) => void;
  /** Budget check and recording around each model call; may throw BUDGET_EXCEEDED. */
  beforeModelCall?: (request: LlmRequest) => Promise<void>;
  afterModelCall?: (request: LlmRequest, response: LlmResponse) => Promise<void>;
  /** The call failed or was interrupted: what beforeModelCall reserved for it is given back. */
  modelCallFailed?: (request: LlmRequest) => Promise<void>;
  /** Validates a delivered result beyond its schema (e.g. plan validation); returns problems or []. */
  check?: (result: O) => string[] | Promise<string[]>;
  /** Sees a return_result the loop rejected (schema or check), with the problems sent back to the model. */
  onRejectedResult?: (call: ToolCall, problems: string[]) => Promise<void>;
  /** Messages humans send this agent while it works (`acia say`). */
  inbox?: AgentInbox;
  runId?: string;
}

const MAX_REPAIRS = 3;
const MAX_BARE_REPLIES = 3;

/** What one agent session carries from turn to turn. */
interface LoopState {
  readonly tools: LlmToolSpec[];
  readonly messages: Message[];
  readonly guard: LoopGuard;
  /** System prompt plus tool definitions, in characters: what elision cannot shrink. */
  readonly fixedChars: number;
  repairs: number;
  bareReplies: number;
  compactedForError: boolean;
}

/** A step either ends the session with an outcome or lets the loop go on to the next turn (with messages heard on the way). */
type Step<O> = { done: AgentOutcome<O> } | { done: null; heard?: string[] };
const CONTINUE = { done: null } as const;

/**
 * The agent loop: calls the model, runs the tools it asks for, feeds results back, and ends when the agent
 * delivers a result of `opts.output` through `return_result`, refuses, or breaks the protocol. Each turn is
 * a sequence of small steps (query, then act on the reply) that each return an outcome or continue.
 *
 * @returns the outcome; model errors that are not the loop's to repair are thrown.
 */
export async function runAgent<O>(opts: AgentRunOptions<O>): Promise<AgentOutcome<O>> {
  // A copy, frozen for this session: the specs (and their schemas) stay as the toolbox and registry have them.
  const tools = frozenJson(structuredClone([...opts.toolbox.specs, returnResultSpec(opts.output)]));
  const state: LoopState = {
    tools,
    messages: [frozenJson({ role: 'user', content: opts.task })],
    guard: new LoopGuard(),
    fixedChars: opts.system.length + JSON.stringify(tools).length,
    repairs: 0,
    bareReplies: 0,
    compactedForError: false,
  };
  for (let turn = 1; turn <= opts.maxTurns; turn++) {
    if (opts.signal?.aborted) throw new AciaError('ABORTED', 'interrupted');
    if (opts.inbox) appendToLastUser(state.messages, await opts.inbox.take({ at: 'turn', turn }));
    const response = await query(opts, state, turn);
    if (response === null) {
      turn--; // compacted, or a message interrupted the call: the same turn again
      continue;
    }
    const step = await act(opts, state, response, turn);
    if (step.done !== null) return step.done;
  }
  return { kind: 'max_turns', turns: opts.maxTurns, message: `no result after ${opts.maxTurns} turns` };
}

/** One model call over the conversation so far; null when it was too long and has been compacted once. */
async function query<O>(opts: AgentRunOptions<O>, state: LoopState, turn: number): Promise<LlmResponse | null> {
  if (elideOldToolOutput(state.messages, opts.contextTokens ?? 120_000, state.fixedChars) > 0) state.messages.forEach(frozenJson);
  const request: LlmRequest = {
    model: opts.model,
    system: opts.system,
    tools: state.tools,
    // Every message is frozen (frozenJson) as it joins the conversation, so the request can share them:
    // nothing can change what was sent, and its canonical text is built once per message, not per turn.
    messages: [...state.messages],
    maxTokens: opts.maxTokens,
    caller: opts.caller,
    stableMessageIndex: 0,
    ...(opts.runId === undefined ? {} : { runId: opts.runId, stepId: `${opts.caller}#${turn}` }),
  };
  await opts.beforeModelCall?.(request);
  let response: LlmResponse;
  // A human's interrupting message stops this call; the turn is asked again with the message in it.
  const interrupt = opts.inbox?.callSignal();
  const signal = interrupt && opts.signal ? AbortSignal.any([opts.signal, interrupt]) : (interrupt ?? opts.signal);
  try {
    response = await opts.llm.complete(request, {
      ...(signal ? { signal } : {}),
      ...(opts.onChunk ? { onChunk: opts.onChunk } : {}),
    });
  } catch (e) {
    await opts.modelCallFailed?.(request);
    if (interrupt?.aborted && opts.signal?.aborted !== true && opts.inbox) {
      const texts = await opts.inbox.take({ at: 'interrupt', turn });
      if (texts.length > 0) {
        appendToLastUser(state.messages, texts);
        return null;
      }
    }
    // Context too long: elide harder once and retry the turn; anything else is the caller's to handle.
    if (isAciaError(e) && e.code === 'LLM_CONTEXT_LENGTH' && !state.compactedForError) {
      state.compactedForError = true;
      elideOldToolOutput(state.messages, 0, state.fixedChars);
      state.messages.forEach(frozenJson);
      return null;
    }
    throw e;
  }
  await opts.afterModelCall?.(request, response);
  // A copy: the response itself stays the caller's (it is recorded, and its tool inputs go to the tools).
  state.messages.push(frozenJson({ role: 'assistant', content: structuredClone(response.content) }));
  return response;
}

/** Acts on a reply: a refusal or a reply without tool calls, else the tools and the delivered result. */
async function act<O>(opts: AgentRunOptions<O>, state: LoopState, response: LlmResponse, turn: number): Promise<Step<O>> {
  if (response.stopReason === 'refusal') {
    return { done: { kind: 'refused', turns: turn, message: textOf(response) || 'the model refused' } };
  }
  const calls = response.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
  if (calls.length === 0) return bareReply(state, response, turn);
  const ran = await runTools(opts, state, calls, turn);
  if ('done' in ran) return ran;
  const returned = ran.heard.length > 0 ? undefined : calls.find((c) => c.name === RETURN_RESULT);
  if (returned) {
    const step = await checkResult(opts, state, returned, ran.results, turn);
    if (step.done !== null) return step;
    ran.heard.push(...(step.heard ?? []));
  }
  // Every tool_use needs a tool_result in the next user message, even calls skipped above.
  const skipped = ran.heard.length > 0 ? 'not run: a message from the human came first; call it again if it is still needed' : 'not run';
  for (const c of calls) {
    if (!ran.results.some((r) => r.toolUseId === c.id)) ran.results.push({ type: 'tool_result', toolUseId: c.id, content: skipped });
  }
  state.messages.push(frozenJson({ role: 'user', content: [...ran.results, ...ran.heard.map((text) => ({ type: 'text' as const, text }))] }));
  return CONTINUE;
}

/** A reply with no tool call: ask for one, a few times. */
function bareReply<O>(state: LoopState, response: LlmResponse, turn: number): Step<O> {
  state.bareReplies++;
  if (state.bareReplies > MAX_BARE_REPLIES) {
    return { done: { kind: 'protocol_error', turns: turn, message: `no tool call in ${state.bareReplies} replies` } };
  }
  const why = response.stopReason === 'max_tokens' ? 'Your reply was cut off at the token limit. ' : '';
  state.messages.push(frozenJson({ role: 'user', content: `${why}Act through tool calls, and finish by calling ${RETURN_RESULT}.` }));
  return CONTINUE;
}

/** Runs the turn's tool calls (not return_result) unless one repeats a call that changed nothing. */
async function runTools<O>(
  opts: AgentRunOptions<O>,
  state: LoopState,
  calls: ToolUseBlock[],
  turn: number,
): Promise<{ done: AgentOutcome<O> } | { results: ToolResultBlock[]; heard: string[] }> {
  const runnable: ToolCall[] = calls.filter((c) => c.name !== RETURN_RESULT).map((c) => ({ id: c.id, name: c.name, input: c.input }));
  const verdicts = runnable.map((c) => state.guard.check(c.name, c.input));
  const looping = runnable.find((_c, i) => verdicts[i] === 'stop');
  if (looping) {
    return {
      done: { kind: 'loop_detected', turns: turn, message: `${looping.name} called ${LOOP_STOP_AT} times with the same input and nothing changed in between` },
    };
  }
  // A steering message ends the turn at the next tool boundary: the calls after it wait (they get `not run`).
  const heard: string[] = [];
  const boundary = async (afterToolUseId: string): Promise<boolean> => {
    if (!opts.inbox) return false;
    heard.push(...(await opts.inbox.take({ at: 'tool_boundary', turn, afterToolUseId })));
    return heard.length > 0;
  };
  const outcomes = await runCalls(runnable, opts.toolbox, boundary);
  const results: ToolResultBlock[] = [];
  for (const [i, call] of runnable.entries()) {
    const r = outcomes[i];
    if (r === undefined) continue;
    if (r.ok && !opts.toolbox.readOnly(call.name)) state.guard.recordMutation(call.name, call.input);
    const nudge = verdicts[i] === 'nudge' ? nudgeText(call.name) : '';
    results.push({ type: 'tool_result', toolUseId: call.id, content: r.forModel + nudge, ...(r.ok ? {} : { isError: true }) });
  }
  return { results, heard };
}

/** The delivered result: valid ends the session, invalid goes back to the agent with its problems. */
async function checkResult<O>(opts: AgentRunOptions<O>, state: LoopState, returned: ToolUseBlock, results: ToolResultBlock[], turn: number): Promise<Step<O>> {
  const parsed = opts.output.safeParse(unwrap(returned.input, opts.output));
  const problems = parsed.success ? ((await opts.check?.(parsed.data)) ?? []) : [z.prettifyError(parsed.error)];
  if (parsed.success && problems.length === 0) {
    // A message still waiting for this agent reaches it before its result is taken: it may change the result.
    const waiting = opts.inbox ? await opts.inbox.take({ at: 'result', turn, afterToolUseId: returned.id }) : [];
    if (waiting.length === 0) return { done: { kind: 'returned', result: parsed.data, turns: turn } };
    results.push({ type: 'tool_result', toolUseId: returned.id, isError: true, content: `Not taken yet: a message from the human arrived before you finished (below). Take it into account, then call ${RETURN_RESULT} again.` });
    return { done: null, heard: waiting };
  }
  await opts.onRejectedResult?.({ id: returned.id, name: returned.name, input: returned.input }, problems);
  state.repairs++;
  if (state.repairs > MAX_REPAIRS) {
    return { done: { kind: 'protocol_error', turns: turn, message: `result still invalid after ${MAX_REPAIRS} repairs: ${problems.join('; ')}` } };
  }
  results.push({
    type: 'tool_result',
    toolUseId: returned.id,
    isError: true,
    content: `The result is invalid. Fix these problems and call ${RETURN_RESULT} again:\n${problems.join('\n')}`,
  });
  return CONTINUE;
}

/**
 * Read-only calls in a turn run concurrently; if any call writes, all run in order, and after each but the
 * last `boundary` says whether a message stops the rest (they are left out).
 */
async function runCalls(calls: ToolCall[], toolbox: AgentToolbox, boundary: (afterToolUseId: string) => Promise<boolean>): Promise<(ToolResult | undefined)[]> {
  if (calls.every((c) => toolbox.readOnly(c.name))) return Promise.all(calls.map((c) => toolbox.invoke(c)));
  const out: ToolResult[] = [];
  for (const c of calls) {
    out.push(await toolbox.invoke(c));
    if (out.length < calls.length && (await boundary(c.id))) break;
  }
  return out;
}

function nudgeText(name: string): string {
  return `\n\nNote: you have called ${name} with this exact input several times and nothing changed. Try a different approach, or call ${RETURN_RESULT}.`;
}

export function returnResultSpec(output: ZodType): LlmToolSpec {
  const schema = z.toJSONSchema(output, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const isObject = schema.type === 'object';
  const inputSchema = isObject ? schema : { type: 'object', properties: { result: schema }, required: ['result'] };
  delete inputSchema.$schema;
  return {
    name: RETURN_RESULT,
    description: 'Deliver your final result. Call it exactly once, when the work is done.',
    inputSchema,
  };
}

/** Non-object outputs travel wrapped as {result: ...}. */
function unwrap(input: unknown, output: ZodType): unknown {
  const isObject = (z.toJSONSchema(output, { io: 'input', unrepresentable: 'any' }) as { type?: unknown }).type === 'object';
  if (isObject) return input;
  return typeof input === 'object' && input !== null && 'result' in input ? (input).result : input;
}

function textOf(r: LlmResponse): string {
  return r.content
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join('');
}
