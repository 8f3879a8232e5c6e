// Documented exit codes, and the mapping from error codes to them.
import type { ErrorCode } from '../core/errors.js';

export const EXIT = {
  OK: 0,
  FAILED: 1,
  USAGE: 2,
  AWAITING_HUMAN: 3,
  BUDGET_EXHAUSTED: 4,
  /** The run was cancelled (`acia cancel`) and stopped at a safe point; it does not go on. */
  CANCELLED: 5,
  INTERRUPTED: 130,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

const USAGE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'USAGE',
  'CONFIG_INVALID',
  'INPUT_INVALID',
  'FILE_NOT_FOUND',
  'JSON_PARSE',
  'NOT_A_GIT_REPO',
  'REPO_NO_COMMITS',
  // The repository ships something ACIA refuses (a link in .acia/, tracked run state): the user fixes the repo.
  'UNSAFE_REPO',
  'SANDBOX_UNAVAILABLE',
  'APPLY_REFUSED',
  'LLM_AUTH',
  'RUN_NOT_FOUND',
  'FLEET_POLICY',
  'RUN_FINISHED',
  'LEDGER_LOCKED',
]);

export function exitCodeFor(code: ErrorCode): ExitCode {
  if (USAGE_CODES.has(code)) return EXIT.USAGE;
  if (code === 'BUDGET_EXCEEDED') return EXIT.BUDGET_EXHAUSTED;
  if (code === 'ABORTED') return EXIT.INTERRUPTED;
  return EXIT.FAILED;
}
