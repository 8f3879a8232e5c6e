// Agents are data: a name, an instructions template, the tools they may use, and a typed output.
import type { ZodType } from 'zod';

export type AgentRole = 'pm' | 'dev' | 'qa';

export interface AgentDefinition<O> {
  readonly role: AgentRole;
  /** File name of the markdown template in src/agents/prompts/. */
  readonly instructions: string;
  /** Tool names resolved against the registry the caller supplies. */
  readonly tools: readonly string[];
  /** The typed result, delivered through the `return_result` tool. */
  readonly output: ZodType<O>;
  readonly maxTurns: number;
}

export function defineAgent<O>(definition: AgentDefinition<O>): AgentDefinition<O> {
  return Object.freeze({ ...definition, tools: Object.freeze([...definition.tools]) });
}
