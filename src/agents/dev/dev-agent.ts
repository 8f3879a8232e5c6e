// The Dev agent: edits code in its own worktree with file, search, command and test tools.
import { z } from 'zod';
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
  output: DevOutput,
  ...builtinSettings('dev'),
});
