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
  // A role's own budget (its role file) is not the run's: said, or raising the run's limit looks like the fix.
  return b.role === undefined ? breachText(b, held) : `role ${b.role}'s own budget: ${breachText(b, held)}`;
}

function breachText(b: BudgetBreach, held: (s: string) => string): string {
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
  state: Pick<RunState, 'tokens' | 'costUsd'>,
  next: { usd: number | null; tokens: number },
  elapsedMinutes: number,
  /** What calls under way in this process hold (counted as spent: each may cost its whole estimate). */
  held: { usd: number; tokens: number } = { usd: 0, tokens: 0 },
): BudgetBreach | null {
  if (limits.maxMinutes !== undefined && elapsedMinutes > limits.maxMinutes) {
    return { limit: 'minutes', spent: elapsedMinutes, max: limits.maxMinutes };
  }
  const tokens = state.tokens + held.tokens + next.tokens;
  if (limits.maxTokens !== undefined && tokens > limits.maxTokens) {
    return { limit: 'tokens', spent: tokens, max: limits.maxTokens, ...(held.tokens > 0 ? { inFlight: held.tokens } : {}) };
  }
  const usd = state.costUsd + held.usd + (next.usd ?? 0);
  if (limits.maxCostUsd !== undefined && next.usd !== null && usd > limits.maxCostUsd) {
    return { limit: 'cost', spent: usd, max: limits.maxCostUsd, ...(held.usd > 0 ? { inFlight: held.usd } : {}) };
  }
  return null;
}

/**
 * The estimates model calls under way in this process hold against a run with no shared gate (a local
 * run): calls started together (parallel tasks, an external agent's concurrent requests) are each checked
 * against the others' worst case, not only against what was spent before them.
 */
class LocalHolds {
  private readonly held = new Map<string, BudgetAmount>();
  private next = 0;

  total(): { usd: number; tokens: number } {
    let usd = 0;
    let tokens = 0;
    for (const a of this.held.values()) {
      usd += a.usd ?? 0;
      tokens += a.tokens;
    }
    return { usd, tokens };
  }

  hold(runId: string, amount: BudgetAmount): BudgetReservation {
    const reservation = { id: `local-${++this.next}`, runId, amount };
    this.held.set(reservation.id, amount);
    return reservation;
  }

  drop(reservation: BudgetReservation): void {
    this.held.delete(reservation.id);
  }
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
  /** `spent`: what this process's fold of the ledger says the run spent (a shared gate counts its own). */
  reserve(runId: string, estimate: BudgetAmount, o: { enforce: boolean; spent: Pick<RunState, 'tokens' | 'costUsd'> }): Promise<ReserveOutcome>;
  settle(reservation: BudgetReservation, actual: BudgetAmount): Promise<void>;
  release(reservation: BudgetReservation): Promise<void>;
}

/**
 * A local run's gate: cost and tokens checked against this process's fold of the ledger plus what its
 * calls under way hold (LocalHolds). One per run session's deps (createDeps makes it).
 */
export class LocalBudgetGate implements BudgetGate {
  private readonly holds = new LocalHolds();

  constructor(private readonly limits: Pick<BudgetLimits, 'maxCostUsd' | 'maxTokens'>) {}

  reserve(runId: string, estimate: BudgetAmount, o: { enforce: boolean; spent: Pick<RunState, 'tokens' | 'costUsd'> }): Promise<ReserveOutcome> {
    const breach = o.enforce ? checkBudget({ maxCostUsd: this.limits.maxCostUsd, maxTokens: this.limits.maxTokens }, o.spent, estimate, 0, this.holds.total()) : null;
    return Promise.resolve(breach ? { breach } : { reservation: this.holds.hold(runId, estimate) });
  }

  settle(reservation: BudgetReservation): Promise<void> {
    this.holds.drop(reservation);
    return Promise.resolve();
  }

  release(reservation: BudgetReservation): Promise<void> {
    this.holds.drop(reservation);
    return Promise.resolve();
  }
}
