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

/**
 * What each kind of task records as its output (TASK_COMPLETED.output): guards and verification
 * expressions read these fields. Open objects: a Dev agent's reported facts ride along.
 */
const DevOutput = z.looseObject({ summary: z.string(), filesChanged: z.number().int().min(0), commit: z.string().nullable() });
const QaOutput = z.looseObject({
  passed: z.boolean(),
  exitCode: z.number().int().nullable(),
  claimedPassed: z.boolean().nullable(),
  passedCount: z.number().int().nullable(),
  failedCount: z.number().int().nullable(),
});
const ApproveOutput = z.strictObject({ approved: z.literal(true), note: z.string().optional() });
const ReplanOutput = z.strictObject({ replanned: z.boolean(), toPlanId: z.string().optional(), diff: z.string().optional() });
const outputSchema = (schema: z.ZodType): Record<string, unknown> => {
  const { $schema: _drop, ...json } = z.toJSONSchema(schema, { io: 'output' });
  return json;
};

/** The built-in tools each actor's agent works with (their descriptors: `acia tool`). */
const TOOLS = {
  dev: ['read_file', 'write_file', 'edit_file', 'list_dir', 'search', 'run_command', 'run_tests', 'git_status', 'git_diff'],
  qa: ['read_file', 'list_dir', 'search', 'write_file', 'edit_file', 'run_tests', 'run_command', 'git_diff'],
};
const tools = (names: readonly string[]) => names.map((name) => ({ name, version: '1' }));
const DEV_EFFECTS = ['commits to the task branch acia-tasks/<run>/<task>', 'merges into the run branch acia/<run>'];

export const defaultCapabilityMap: CapabilityMap = {
  version: ACIA_CAPS_VERSION,
  capabilities: [
    {
      name: 'dev.implement',
      version: '1.0.0',
      actor: 'dev',
      sideEffects: DEV_EFFECTS,
      description: 'Change code in a task worktree to implement the instructions; each attempt is a commit.',
      inputSchema: inputSchema('dev.implement'),
      outputSchema: outputSchema(DevOutput),
      invariants: ['the run branch only moves by a merge of the task branch', 'task.post allowed every changed file'],
      tools: tools(TOOLS.dev),
    },
    {
      name: 'dev.fix',
      version: '1.0.0',
      actor: 'dev',
      sideEffects: DEV_EFFECTS,
      description: 'Fix a failure reported by QA or a merge conflict, given the failure output in the instructions.',
      inputSchema: inputSchema('dev.fix'),
      outputSchema: outputSchema(DevOutput),
      invariants: ['tests are not weakened or deleted to pass', 'task.post allowed every changed file'],
      tools: tools(TOOLS.dev),
    },
    {
      name: 'dev.merge',
      version: '1.0.0',
      actor: 'dev',
      sideEffects: DEV_EFFECTS,
      description:
        "Resolve a merge conflict between a task's branch and the run branch, with both sides, the conflict hunks and both tasks' instructions in view; the team adds it when a merge conflicts.",
      inputSchema: inputSchema('dev.merge'),
      outputSchema: outputSchema(DevOutput),
      invariants: ['no conflict markers are left in the conflicted files'],
      tools: tools(TOOLS.dev),
    },
    {
      name: 'qa.verify',
      version: '1.0.0',
      actor: 'qa',
      sideEffects: [],
      description: "Run the project's real test command (optionally one test path) and report a verdict from its exit code.",
      inputSchema: inputSchema('qa.verify'),
      outputSchema: outputSchema(QaOutput),
      invariants: ['passed == (exitCode == 0): the verdict is the exit code of a real test run, never the agent\'s claim'],
      tools: tools(TOOLS.qa),
    },
    {
      name: 'qa.write_tests',
      version: '1.0.0',
      actor: 'qa',
      sideEffects: ['commits test files to the task branch', 'merges them into the run branch'],
      description: 'Write or extend tests that pin down the behaviour described in the instructions.',
      inputSchema: inputSchema('qa.write_tests'),
      outputSchema: outputSchema(QaOutput),
      invariants: ['passed == (exitCode == 0)'],
      tools: tools(TOOLS.qa),
    },
    {
      name: 'human.approve',
      version: '1.0.0',
      actor: 'human',
      sideEffects: [],
      description: 'Stop and ask the human a question; the run continues with their recorded answer.',
      inputSchema: inputSchema('human.approve'),
      outputSchema: outputSchema(ApproveOutput),
      invariants: ['completes only on a recorded human answer (HUMAN_RESPONSE)'],
      tools: [],
    },
    {
      name: 'pm.replan',
      version: '1.0.0',
      actor: 'pm',
      sideEffects: ['resets the run branch to the base commit when it switches plans'],
      description: 'Switch to the plan set\'s alternative plan over the same context (once per run), recording why.',
      inputSchema: inputSchema('pm.replan'),
      outputSchema: outputSchema(ReplanOutput),
      invariants: ['the new plan has the same contextRef'],
      tools: [],
    },
  ],
};
