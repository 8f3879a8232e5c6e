// The QA agent: runs the real tests (and may write them). Its `passed` is a claim; the team decides from exit codes.
import { z } from 'zod';
import { defineAgent } from '../define-agent.js';
import { builtinSettings } from '../roles/builtin.js';
import { Lessons } from '../lessons.js';

export const QaOutput = z.object({
  passed: z.boolean(),
  summary: z.string().min(1),
  failures: z.string().optional(),
  lessons: Lessons.optional(),
});
export type QaOutput = z.infer<typeof QaOutput>;

export const qaAgent = defineAgent({
  role: 'qa',
  instructions: 'qa.md',
  promptVars: [],
  output: QaOutput,
  ...builtinSettings('qa'),
});
