// The settings a run recorded, as a config layer (core/config/load.ts): `acia resume`, the servers' resume,
// replay and a fleet takeover all continue a run with what its latest session ran with.
import type { RecordedSettings } from '../config/load.js';
import type { RunState } from './state.js';

/** Null before the run recorded RUN_STARTED. */
export function recordedSettings(state: RunState): RecordedSettings | null {
  const s = state.settings;
  if (s === null || state.runId === null) return null;
  return { runId: state.runId, model: s.model, parallel: s.parallel, maxIterations: s.maxIterations, budget: s.budget, ...(s.memoryLessons === undefined ? {} : { memoryLessons: s.memoryLessons }), ...(s.roleModels === undefined ? {} : { roleModels: s.roleModels }) };
}
