// The scripted-model format and its engine: ordered turns matched per caller, shared by the in-process
// ScriptedClient and the fake Anthropic/OpenAI server. Format reference: docs/scripted-model.md.
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { AciaError, errorMessage } from '../errors.js';

export const FAULTS = [
  '429',
  '529',
  '500',
  '401',
  'cut_stream',
  'cut_tool_input',
  'malformed_tool_json',
  'empty',
  'garbage_body',
] as const;
export type Fault = (typeof FAULTS)[number];

const CallerPattern = z
  .string()
  .regex(/^[A-Za-z0-9_:.-]+\*?$/, 'caller: an exact caller like "dev:t2", or a prefix glob like "dev:*"');

export const ScriptTurn = z.strictObject({
  caller: CallerPattern,
  latencyMs: z.number().int().nonnegative().max(600_000).optional(),
  text: z.string().optional(),
  toolCalls: z
    .array(z.strictObject({ name: z.string().min(1), input: z.record(z.string(), z.unknown()) }))
    .optional(),
  stopReason: z.enum(['end_turn', 'tool_use', 'max_tokens', 'refusal']).optional(),
  usage: z
    .strictObject({
      inputTokens: z.number().int().nonnegative().optional(),
      outputTokens: z.number().int().nonnegative().optional(),
    })
    .optional(),
  fault: z.enum(FAULTS).optional(),
  retryAfterS: z.number().nonnegative().max(3600).optional(),
  times: z.number().int().min(1).max(1000).optional(),
});
export type ScriptTurn = z.infer<typeof ScriptTurn>;

export const Script = z.strictObject({
  version: z.literal(1),
  model: z.string().min(1).optional(),
  turns: z.array(ScriptTurn),
});
export type Script = z.infer<typeof Script>;

/** A turn as served: tool ids assigned, stop reason defaulted. */
export interface ServedTurn {
  caller: string;
  /** 1-based count of turns served to this caller, this one included. */
  ordinal: number;
  fault: Fault | undefined;
  retryAfterS: number | undefined;
  latencyMs: number;
  text: string;
  toolCalls: { id: string; name: string; input: Record<string, unknown> }[];
  stopReason: 'end_turn' | 'tool_use' | 'max_tokens' | 'refusal';
  usage: { inputTokens?: number | undefined; outputTokens?: number | undefined } | undefined;
}

/** Validates a parsed script; errors are one line naming the JSON path. */
export function parseScript(value: unknown, source = 'script'): Script {
  const result = Script.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue ? formatPath(issue.path) : '$';
  throw new AciaError('CONFIG_INVALID', `${source}: ${path}: ${issue?.message ?? 'invalid script'}`, {
    hint: 'see docs/scripted-model.md for the script format',
  });
}

export async function loadScript(file: string): Promise<Script> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new AciaError('FILE_NOT_FOUND', `scripted model: cannot read ${file}: ${errorMessage(e)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new AciaError('JSON_PARSE', `${file}: not JSON: ${errorMessage(e)}`);
  }
  return parseScript(json, file);
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, k) => (typeof k === 'number' ? `${acc}[${k}]` : `${acc}.${String(k)}`), '$');
}

export function callerMatches(pattern: string, caller: string): boolean {
  return pattern.endsWith('*') ? caller.startsWith(pattern.slice(0, -1)) : pattern === caller;
}

/**
 * Serves turns in script order, each caller from its own queue: a request from C takes the first
 * unconsumed turn whose pattern matches C. `next` is synchronous, so parallel callers cannot race.
 */
export class ScriptEngine {
  readonly script: Script;
  private readonly remaining: number[];
  private readonly served = new Map<string, number>();
  private readonly toolIds = new Map<string, number>();

  constructor(script: Script) {
    this.script = script;
    this.remaining = script.turns.map((t) => (t.fault === undefined ? 1 : (t.times ?? 1)));
  }

  next(caller: string): ServedTurn {
    const index = this.script.turns.findIndex((t, i) => (this.remaining[i] ?? 0) > 0 && callerMatches(t.caller, caller));
    const turn = index < 0 ? undefined : this.script.turns[index];
    const servedSoFar = this.served.get(caller) ?? 0;
    if (turn === undefined) {
      throw new AciaError(
        'SCRIPT_EXHAUSTED',
        `scripted model: no turn left for caller "${caller}" (served ${servedSoFar} turns to it; script has none matching)`,
      );
    }
    this.remaining[index] = (this.remaining[index] ?? 1) - 1;
    this.served.set(caller, servedSoFar + 1);
    const toolCalls = (turn.toolCalls ?? []).map((c) => ({ id: this.nextToolId(caller), name: c.name, input: c.input }));
    return {
      caller,
      ordinal: servedSoFar + 1,
      fault: turn.fault,
      retryAfterS: turn.retryAfterS,
      latencyMs: turn.latencyMs ?? 0,
      text: turn.text ?? '',
      toolCalls,
      stopReason: turn.stopReason ?? (toolCalls.length > 0 ? 'tool_use' : 'end_turn'),
      usage: turn.usage,
    };
  }

  /** The turn `next(caller)` would serve, without consuming it; null when none is left. */
  peek(caller: string): ScriptTurn | null {
    const index = this.script.turns.findIndex((t, i) => (this.remaining[i] ?? 0) > 0 && callerMatches(t.caller, caller));
    return index < 0 ? null : (this.script.turns[index] ?? null);
  }

  /** Turns not yet consumed (a finished scenario should have none left). */
  unconsumed(): { index: number; caller: string }[] {
    return this.script.turns.flatMap((t, index) => ((this.remaining[index] ?? 0) > 0 ? [{ index, caller: t.caller }] : []));
  }

  servedCount(caller: string): number {
    return this.served.get(caller) ?? 0;
  }

  private nextToolId(caller: string): string {
    const n = (this.toolIds.get(caller) ?? 0) + 1;
    this.toolIds.set(caller, n);
    return `toolu_${caller.replace(/[^A-Za-z0-9]/g, '_')}_${n}`;
  }
}

/** The text and tool-input JSON a malformed_tool_json fault sends: valid prefix, broken tail. */
export function brokenToolJson(input: Record<string, unknown>): string {
  const json = JSON.stringify(input);
  return `${json.slice(0, Math.max(1, Math.floor(json.length / 2)))}",,}`;
}

/** Splits a string into about `parts` pieces so streaming emits several deltas. */
export function splitPieces(s: string, parts = 3): string[] {
  if (s.length === 0) return [];
  const size = Math.max(1, Math.ceil(s.length / parts));
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}
