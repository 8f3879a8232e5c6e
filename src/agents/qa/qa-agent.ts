// The QA agent: runs the real tests (and may write them). Its `passed` is a claim; the team decides from exit codes.
import { z } from 'zod';
import { defineAgent } from '../define-agent.js';
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
  tools: ['read_file', 'list_dir', 'search', 'write_file', 'edit_file', 'run_tests', 'run_command', 'git_diff'],
  output: QaOutput,
  maxTurns: 20,
});
