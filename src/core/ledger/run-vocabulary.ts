// The words a run ends, escalates and is answered with, and the manifest that anchors its ledger: the
// vocabulary the ledger's entries (events.ts) and everything that reports on a run share.
import { z } from 'zod';

export const TERMINAL_REASONS = [
  'succeeded',
  /** The outcome rule does not hold (a needed task failed or was skipped, or nothing verified the final head). */
  'failed',
  'verification_failed',
  'awaiting_human',
  'budget_exhausted',
  'aborted',
  'error',
  /** Someone asked for the run to stop (`acia cancel`); it stopped at its next safe point and does not go on. */
  'cancelled',
] as const;
export const TerminalReason = z.enum(TERMINAL_REASONS);
export type TerminalReason = z.infer<typeof TerminalReason>;

export const ESCALATION_REASONS = [
  'fixes_exhausted',
  'policy_denied',
  'budget_exceeded',
  'loop_detected',
  'human_approve',
  'merge_conflict',
  'task_failed',
  /** The test command could not start (exit 127, a missing runner): the environment, not the code. */
  'environment_broken',
  /** `acia run --approve-plan`: the PM's plans wait for a human before anything runs. */
  'plan_approval',
] as const;
export const EscalationReason = z.enum(ESCALATION_REASONS);
export type EscalationReason = z.infer<typeof EscalationReason>;

/** `switch` and `edit` answer a plan approval: run the other plan, or the plan as the human edited it. */
export const HumanAction = z.enum(['guidance', 'retry', 'skip', 'approve', 'abort', 'switch', 'edit']);
export type HumanAction = z.infer<typeof HumanAction>;
/** The run's manifest: written when a run stops, it anchors the ledger head outside the ledger file. */
export const RunManifest = z.object({
  runId: z.string(),
  status: z.union([TerminalReason, z.literal('running')]),
  goal: z.string(),
  head: z.object({ seq: z.number(), hash: z.string() }).nullable(),
  startedAt: z.string(),
  updatedAt: z.string(),
  costUsd: z.number().nullable(),
  runBranch: z.string(),
});
export type RunManifest = z.infer<typeof RunManifest>;
