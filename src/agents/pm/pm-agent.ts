// The PM agent: read-only tools, returns Plan-A/Plan-B and its choice, which the team turns into a PlanSet.
import { z } from 'zod';
import { Edge, Join, TaskId, RetryPolicy } from '../../core/acm/contracts.js';
import { listDir, readFile, search } from '../../core/tools/tool-sets.js';
import { defineAgent } from '../define-agent.js';
import { builtinSettings } from '../roles/builtin.js';

export const PlanDraft = z.object({
  id: z.string().min(1).describe('plan id, e.g. plan-A'),
  rationale: z.string().min(1),
  tasks: z
    .array(
      z.object({
        id: TaskId,
        capability: z.string(),
        title: z.string().optional(),
        input: z.record(z.string(), z.unknown()),
        retry: RetryPolicy.optional(),
        verification: z.array(z.string()).optional(),
      }),
    )
    .min(1),
  edges: z.array(Edge).default([]),
  joins: z.array(Join).default([]),
});
export type PlanDraft = z.infer<typeof PlanDraft>;

export const PmOutput = z.object({
  plans: z.array(PlanDraft).min(1).max(3),
  chosenPlanId: z.string().min(1),
  selectionRationale: z.string().min(1),
});
export type PmOutput = z.infer<typeof PmOutput>;

export const pmAgent = defineAgent({
  role: 'pm',
  instructions: 'pm.md',
  promptVars: ['capabilities'],
  tools: [readFile, listDir, search],
  output: PmOutput,
  // The turn limit is the built-in role file's (src/agents/prompts/pm.md); the tools are named here by reference.
  maxTurns: builtinSettings('pm').maxTurns,
});
