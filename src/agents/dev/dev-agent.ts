// The Dev agent: edits code in its own worktree with file, search, command and test tools.
import { z } from 'zod';
import { editFile, gitDiff, gitStatus, listDir, readFile, runCommand, runTests, search, writeFile } from '../../core/tools/tool-sets.js';
import { defineAgent } from '../define-agent.js';
import { builtinSettings } from '../roles/builtin.js';
import { Lessons } from '../lessons.js';

export const DevOutput = z.object({
  summary: z.string().min(1),
  facts: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).optional(),
  lessons: Lessons.optional(),
});
export type DevOutput = z.infer<typeof DevOutput>;

export const devAgent = defineAgent({
  role: 'dev',
  instructions: 'dev.md',
  promptVars: [],
  tools: [readFile, writeFile, editFile, listDir, search, runCommand, runTests, gitStatus, gitDiff],
  output: DevOutput,
  // The turn limit is the built-in role file's (src/agents/prompts/dev.md); the tools are named here by reference.
  maxTurns: builtinSettings('dev').maxTurns,
});
