// What the budget tests share: an in-memory budget gate that logs what it was asked, and the part of a
// RunContext that the model hooks and the metering proxy read (run id, state, clock, prices, limits,
// recorder) with the rest left out.
import { LocalBudgetGate, type BudgetAmount, type BudgetBreach, type BudgetGate, type BudgetLimits, type BudgetReservation, type ReserveOutcome } from '../../src/team/budget.js';
import type { ModelDeps } from '../../src/team/deps.js';
import type { RunContext } from '../../src/team/run-context.js';

/** An in-memory gate that keeps a log of what it was asked: `reserve <runId> <tokens> enforce|waived`, `settle <id> <usd> <tokens>`, `release <id>`. */
export class RecordingGate implements BudgetGate {
  readonly log: string[] = [];
  private n = 0;
  /** While set, an enforced reservation is refused with this breach (a waived one is still granted). */
  constructor(public refusal: BudgetBreach | null = null) {}
  reserve(runId: string, estimate: BudgetAmount, o: { enforce: boolean }): Promise<ReserveOutcome> {
    this.log.push(`reserve ${runId} ${estimate.tokens} ${o.enforce ? 'enforce' : 'waived'}`);
    if (this.refusal && o.enforce) return Promise.resolve({ breach: this.refusal });
    return Promise.resolve({ reservation: { id: `r${++this.n}`, runId, amount: estimate } });
  }
  settle(r: BudgetReservation, actual: BudgetAmount): Promise<void> {
    this.log.push(`settle ${r.id} ${String(actual.usd)} ${actual.tokens}`);
    return Promise.resolve();
  }
  release(r: BudgetReservation): Promise<void> {
    this.log.push(`release ${r.id}`);
    return Promise.resolve();
  }
}

export interface BudgetContextOptions {
  runId: string;
  /** The shared gate, as a fleet run has; without one, a local run's (its own fold and its calls' holds). */
  gate?: BudgetGate;
  model: Partial<ModelDeps>;
  config: { budget: BudgetLimits; maxTokensPerCall?: number };
  spentUsd?: number;
  waived?: boolean;
  /** How long before the clock's (fixed) now this session started. */
  minutesAgo?: number;
}

/** A partial RunContext; `recorded` lists the types of the ledger entries written through its recorder. */
export function budgetContext(o: BudgetContextOptions): RunContext & { recorded: string[] } {
  const recorded: string[] = [];
  const now = Date.parse('2026-11-23T12:00:00Z');
  const ctx = {
    runId: o.runId,
    recorded,
    sessionStartMs: now - (o.minutesAgo ?? 0) * 60_000,
    state: { budgetWaived: o.waived ?? false, costUsd: o.spentUsd ?? 0, tokens: 0, roleSpend: new Map() },
    roles: { recorded: false },
    deps: {
      fleet: { budgetGate: o.gate ?? new LocalBudgetGate(o.config.budget) },
      model: o.model,
      runtime: { clock: { now: () => new Date(now) } },
      config: o.config,
    },
    rec: {
      now: () => 0,
      blob: () => Promise.resolve(`sha256:${'0'.repeat(64)}`),
      record: (_actor: string, type: string) => {
        recorded.push(type);
        return Promise.resolve();
      },
      // A model call's record is queued (Recorder.note); for these tests the same as record.
      note: (_actor: string, type: string) => {
        recorded.push(type);
        return Promise.resolve();
      },
    },
  };
  return ctx as unknown as RunContext & { recorded: string[] };
}
