// What an `acia resume` brings to a run that waits: an `--answer` checked against the open escalation's
// options, and a budget stop that the limits given now no longer break (which answers it by itself).
import { AciaError } from '../core/errors.js';
import type { HumanAction } from '../core/ledger/run-vocabulary.js';
import { lastOf } from '../core/ledger/entry.js';
import type { RunContext } from './run-context.js';
import type { PendingEscalation } from './run-state.js';

/** An `--answer` checked against the options the open escalation offered, before anything is recorded. */
export function checkAnswer(runId: string, open: PendingEscalation | null, raw: string): { action: HumanAction; text?: string } {
  const answer = parseAnswer(raw);
  if (answer.action === 'guidance' && answer.text === '') throw new AciaError('USAGE', '--answer is empty; give guidance text or one of retry, skip, approve, abort');
  if (open === null || open.options.includes(answer.action)) return answer;
  const words = open.options.filter((o) => o !== 'guidance');
  const takes = `${open.options.includes('guidance') ? 'guidance text or ' : ''}one of: ${words.join(', ')}`;
  const given = answer.action === 'guidance' ? `guidance ("${answer.text ?? ''}")` : `"${answer.action}"`;
  throw new AciaError('USAGE', `run ${runId} waits on ${open.reason.replace(/_/g, ' ')}, which does not take ${given}; it takes ${takes}`);
}

/** When the run stopped on a budget limit that the limits given now no longer break, what changed; else null. */
export function budgetRaised(ctx: RunContext): string | null {
  const breach = lastOf(ctx.rec.ledger.entries(), 'BUDGET_EXCEEDED')?.data;
  // A role's own budget is not raised by the run's limits: only approve answers it.
  if (!breach || breach.role !== undefined) return null;
  const limits = ctx.deps.config.budget;
  switch (breach.limit) {
    case 'tokens':
      return limits.maxTokens === undefined || limits.maxTokens > breach.max ? `token limit raised from ${breach.max} to ${limits.maxTokens ?? 'none'}` : null;
    case 'cost':
      return limits.maxCostUsd === undefined || limits.maxCostUsd > breach.max ? `cost limit raised from $${breach.max} to ${limits.maxCostUsd === undefined ? 'none' : `$${limits.maxCostUsd}`}` : null;
    case 'minutes':
      // Minutes count per session, so a new session starts under the limit again.
      return `a new session of at most ${limits.maxMinutes ?? 'unlimited'} minutes`;
    case 'iterations':
      return null;
  }
}

/** `retry`, `skip`, `approve`, `abort` as the whole answer are actions; anything else is guidance. */
export function parseAnswer(answer: string): { action: HumanAction; text?: string } {
  const word = answer.trim().toLowerCase();
  if (word === 'retry' || word === 'skip' || word === 'approve' || word === 'abort') return { action: word };
  return { action: 'guidance', text: answer.trim() };
}
