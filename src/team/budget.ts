// Hard budgets across all agents of a run, checked before every model call with that call's estimate.
import { AciaError } from '../core/errors.js';
import type { EventDataOf } from '../core/ledger/events.js';
import type { RunState } from './run-state.js';

export interface BudgetLimits {
  maxCostUsd?: number | undefined;
  maxTokens?: number | undefined;
  maxMinutes?: number | undefined;
}

export type BudgetBreach = EventDataOf<'BUDGET_EXCEEDED'>;

export class BudgetExceededError extends AciaError {
  constructor(readonly breach: BudgetBreach) {
    super('BUDGET_EXCEEDED', `budget exhausted: ${describeBreach(breach)}`);
  }
}

export function describeBreach(b: BudgetBreach): string {
  // A shared budget also counts what calls under way elsewhere hold: said, or the stop looks early.
  const held = (s: string) => (b.inFlight ? ` (${s} of it held by calls under way)` : '');
  switch (b.limit) {
    case 'cost':
      return `cost $${b.spent.toFixed(4)} would pass the limit of $${b.max}${held(`$${(b.inFlight ?? 0).toFixed(4)}`)}`;
    case 'tokens':
      return `${b.spent} tokens would pass the limit of ${b.max}${held(String(b.inFlight))}`;
    case 'minutes':
      return `${b.spent.toFixed(1)} minutes passed the limit of ${b.max}`;
    case 'iterations':
      return `${b.spent} fix iterations reached the limit of ${b.max}`;
  }
}

/**
 * Returns the first limit the next call would break. Cost of an unknown-priced model cannot be
 * checked, which is why the pricing table warns rather than guessing zero.
 */
export function checkBudget(
  limits: BudgetLimits,
  state: RunState,
  next: { usd: number | null; tokens: number },
  elapsedMinutes: number,
): BudgetBreach | null {
  if (limits.maxMinutes !== undefined && elapsedMinutes > limits.maxMinutes) {
    return { limit: 'minutes', spent: elapsedMinutes, max: limits.maxMinutes };
  }
  if (limits.maxTokens !== undefined && state.tokens + next.tokens > limits.maxTokens) {
    return { limit: 'tokens', spent: state.tokens + next.tokens, max: limits.maxTokens };
  }
  if (limits.maxCostUsd !== undefined && next.usd !== null && state.costUsd + next.usd > limits.maxCostUsd) {
    return { limit: 'cost', spent: state.costUsd + next.usd, max: limits.maxCostUsd };
  }
  return null;
}

/** What a model call is budgeted at, or what it cost; usd is null when the model's price is unknown. */
export interface BudgetAmount {
  usd: number | null;
  tokens: number;
}

/** A call's estimate held against a shared budget until the call ends. */
export interface BudgetReservation {
  readonly id: string;
  readonly runId: string;
  readonly amount: BudgetAmount;
}

export type ReserveOutcome = { reservation: BudgetReservation } | { breach: BudgetBreach };

/**
 * A run's cost and token budget shared by every process that works on the run (the fleet's database).
 * `reserve` holds a call's estimate before the call, or refuses with the limit it would pass; the
 * reservation is replaced by what the call cost (`settle`) or dropped when the call failed (`release`).
 * With `enforce: false` (a human waived the budget) it never refuses but still counts the call.
 * Minutes and fix iterations stay per process: they are not money two processes could overspend.
 */
export interface BudgetGate {
  reserve(runId: string, estimate: BudgetAmount, o: { enforce: boolean }): Promise<ReserveOutcome>;
  settle(reservation: BudgetReservation, actual: BudgetAmount): Promise<void>;
  release(reservation: BudgetReservation): Promise<void>;
}
