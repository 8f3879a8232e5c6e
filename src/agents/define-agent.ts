// Agents are data: a name, an instructions template, the tools they may use, and a typed output.
import type { ZodType } from 'zod';
import type { Tool } from '../core/tools/types.js';

export type AgentRole = 'pm' | 'dev' | 'qa';

/**
 * An agent as data. `V` names the template's `{{placeholders}}`: callers must supply exactly these
 * (`renderPrompt` checks it at run time, `npm run lint` checks the template against the declaration).
 */
export interface AgentDefinition<O, V extends string = never> {
  readonly role: AgentRole;
  /** File name of the markdown template in src/agents/prompts/. */
  readonly instructions: string;
  /** The placeholders of the template, filled by `renderPrompt`. */
  readonly promptVars: readonly V[];
  /** The tools it may use, by reference (an unknown one cannot be named); the run supplies their implementations. */
  readonly tools: readonly Tool[];
  /** The typed result, delivered through the `return_result` tool. */
  readonly output: ZodType<O>;
  readonly maxTurns: number;
}

/** Freezes a definition so a run cannot change an agent another run shares. */
export function defineAgent<O, const V extends string = never>(definition: AgentDefinition<O, V>): AgentDefinition<O, V> {
  const names = definition.tools.map((t) => t.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw new Error(`agent ${definition.role}: tool ${twice} is named twice`);
  return Object.freeze({
    ...definition,
    promptVars: Object.freeze([...definition.promptVars]),
    tools: Object.freeze([...definition.tools]),
  });
}
