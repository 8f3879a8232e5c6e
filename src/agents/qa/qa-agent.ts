// The QA agent: runs the real tests (and may write them). Its `passed` is a claim; the team decides from exit codes.
import { z } from 'zod';
import { editFile, gitDiff, listDir, readFile, runCommand, runTests, search, writeFile } from '../../core/tools/tool-sets.js';
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
  tools: [readFile, listDir, search, writeFile, editFile, runTests, runCommand, gitDiff],
  output: QaOutput,
  // The turn limit is the built-in role file's (src/agents/prompts/qa.md); the tools are named here by reference.
  maxTurns: builtinSettings('qa').maxTurns,
});
