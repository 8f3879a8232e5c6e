// The run's state and its fold live in core (core/run): one reducer table every reader of the ledger
// shares. The team imports them from here.
export { emptyRunState, finishedReason, openEscalation, wantsAnotherIteration, type PendingEscalation, type RunState, type SkipCause, type TaskState } from '../core/run/state.js';
export { applyEntry, foldRun } from '../core/run/reducer.js';
