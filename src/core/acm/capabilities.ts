// ACIA's default capability map (acia-caps@1): what a plan may ask the team to do, and each task input's shape.
import { z } from 'zod';
import type { CapabilityMap } from './contracts.js';

export const ACIA_CAPS_VERSION = 'acia-caps@1';

/** MCP tools (mcp__<server>__<tool>) the plan directs a task's agent to use; checked against the run's servers. */
const McpToolRefs = z.array(z.string().regex(/^mcp__[A-Za-z0-9_-]+$/, 'an MCP tool name, mcp__<server>__<tool>')).optional();

export const DevTaskInput = z.strictObject({
  instructions: z.string().min(1),
  files: z.array(z.string().min(1)).optional(),
  tools: McpToolRefs,
});
/** A merge conflict between task branches, resolved by a Dev agent in its own worktree (added by the team). */
export const DevMergeInput = z.strictObject({
  instructions: z.string().min(1),
  /** The task whose branch conflicted with the run branch; its branch is merged in. */
  task: z.string().min(1),
  files: z.array(z.string().min(1)).optional(),
  /** The conflict hunks as git left them, for the agent's first look. */
  conflicts: z.string().optional(),
});
export const QaVerifyInput = z.strictObject({
  instructions: z.string().min(1).optional(),
  testPath: z.string().min(1).optional(),
});
export const QaWriteTestsInput = z.strictObject({
  instructions: z.string().min(1),
  files: z.array(z.string().min(1)).optional(),
  tools: McpToolRefs,
});
export const HumanApproveInput = z.strictObject({ question: z.string().min(1) });
export const PmReplanInput = z.strictObject({ reason: z.string().min(1).optional() });

/** Zod input schemas by capability name; the map's JSON Schemas are generated from these. */
export const CAPABILITY_INPUTS = {
  'dev.implement': DevTaskInput,
  'dev.fix': DevTaskInput,
  'dev.merge': DevMergeInput,
  'qa.verify': QaVerifyInput,
  'qa.write_tests': QaWriteTestsInput,
  'human.approve': HumanApproveInput,
  'pm.replan': PmReplanInput,
} as const;
export type CapabilityName = keyof typeof CAPABILITY_INPUTS;

const inputSchema = (name: CapabilityName): Record<string, unknown> => {
  const { $schema: _drop, ...schema } = z.toJSONSchema(CAPABILITY_INPUTS[name], { io: 'input' });
  return schema;
};

export const defaultCapabilityMap: CapabilityMap = {
  version: ACIA_CAPS_VERSION,
  capabilities: [
    {
      name: 'dev.implement',
      actor: 'dev',
      sideEffects: true,
      description: 'Change code in a task worktree to implement the instructions; each attempt is a commit.',
      inputSchema: inputSchema('dev.implement'),
    },
    {
      name: 'dev.fix',
      actor: 'dev',
      sideEffects: true,
      description: 'Fix a failure reported by QA or a merge conflict, given the failure output in the instructions.',
      inputSchema: inputSchema('dev.fix'),
    },
    {
      name: 'dev.merge',
      actor: 'dev',
      sideEffects: true,
      description:
        "Resolve a merge conflict between a task's branch and the run branch, with both sides, the conflict hunks and both tasks' instructions in view; the team adds it when a merge conflicts.",
      inputSchema: inputSchema('dev.merge'),
    },
    {
      name: 'qa.verify',
      actor: 'qa',
      sideEffects: false,
      description: "Run the project's real test command (optionally one test path) and report a verdict from its exit code.",
      inputSchema: inputSchema('qa.verify'),
    },
    {
      name: 'qa.write_tests',
      actor: 'qa',
      sideEffects: true,
      description: 'Write or extend tests that pin down the behaviour described in the instructions.',
      inputSchema: inputSchema('qa.write_tests'),
    },
    {
      name: 'human.approve',
      actor: 'human',
      sideEffects: false,
      description: 'Stop and ask the human a question; the run continues with their recorded answer.',
      inputSchema: inputSchema('human.approve'),
    },
    {
      name: 'pm.replan',
      actor: 'pm',
      sideEffects: false,
      description: 'Ask the PM for a new plan over the same context, recording why.',
      inputSchema: inputSchema('pm.replan'),
    },
  ],
};
