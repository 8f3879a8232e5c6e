// The Goal Card a run records (ACM v0.5 §5.1): the user's intent, and what ACIA knows of the rest at the
// start — who is involved, the hard constraints it enforces, what counts as success (the outcome rule),
// the policy in force, and where the goal came from.
import type { Goal } from '../core/acm/contracts.js';
import type { Config } from '../core/config/schema.js';
import { MAX_TASKS_PER_PLAN } from '../core/policy/policy.js';

export interface GoalCardInput {
  id: string;
  intent: string;
  runId: string;
  createdAt: string;
  aciaVersion: string;
  config: Pick<Config, 'budget' | 'maxIterations' | 'parallel' | 'protectedPaths'>;
}

export function goalCard(o: GoalCardInput): Goal {
  return {
    id: o.id,
    intent: o.intent,
    // The limits ACIA holds the run to; the Context Packet inherits them (constraints_inherited).
    constraints: { budget: o.config.budget, maxIterations: o.config.maxIterations, parallel: o.config.parallel },
    contextRequired: true,
    actors: ['requester', 'pm-agent', 'dev-agent', 'qa-agent'],
    acceptance: {
      rule: 'docs/acm-conformance.md#the-outcome-rule',
      must_include: [
        'every task of the plan in force completed, or guards closed every way to it',
        "every task's verification expressions held when last evaluated",
        "a real test run passed on the final run-branch head after the last merge",
      ],
    },
    policyContext: {
      engine: 'acia DefaultPolicy',
      hooks: ['plan.admit', 'task.pre', 'task.post'],
      protectedPaths: o.config.protectedPaths,
      maxTasksPerPlan: MAX_TASKS_PER_PLAN,
    },
    metadata: { createdAt: o.createdAt, runId: o.runId, aciaVersion: o.aciaVersion, source: 'acia run' },
  };
}
