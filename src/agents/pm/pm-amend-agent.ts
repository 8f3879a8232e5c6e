// The PM amending its plan while the team carries it out, after a human's message: it keeps the plan
// (no `plan` in its result) or returns the whole plan as it should now be, which the team validates.
import { z } from 'zod';
import { listDir, readFile, search } from '../../core/tools/tool-sets.js';
import { defineAgent } from '../define-agent.js';
import { PlanDraft } from './pm-agent.js';

export const PmAmendOutput = z.object({
  plan: PlanDraft.optional(),
  rationale: z.string().min(1),
});
export type PmAmendOutput = z.infer<typeof PmAmendOutput>;

export const pmAmendAgent = defineAgent({
  role: 'pm',
  instructions: 'pm-amend.md',
  promptVars: ['capabilities'],
  tools: [readFile, listDir, search],
  output: PmAmendOutput,
  maxTurns: 8,
});
