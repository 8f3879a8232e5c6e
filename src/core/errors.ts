// The one error base of ACIA: every failure a user can see carries a stable code the CLI maps to an exit code.

export type ErrorCode =
  | 'USAGE'
  | 'CONFIG_INVALID'
  | 'INPUT_INVALID'
  | 'PLAN_INVALID'
  | 'FILE_NOT_FOUND'
  | 'JSON_PARSE'
  | 'NOT_A_GIT_REPO'
  | 'REPO_NO_COMMITS'
  | 'UNSAFE_REPO'
  | 'SANDBOX_UNAVAILABLE'
  | 'PATH_OUTSIDE_ROOT'
  | 'LLM_AUTH'
  | 'LLM_RATE_LIMITED'
  | 'LLM_OVERLOADED'
  | 'LLM_SERVER'
  | 'LLM_BAD_REQUEST'
  | 'LLM_CONTEXT_LENGTH'
  | 'LLM_BAD_RESPONSE'
  | 'LLM_STREAM_CUT'
  | 'LLM_PROTOCOL'
  | 'SCRIPT_EXHAUSTED'
  | 'REPLAY_DIVERGED'
  | 'LEDGER_LOCKED'
  | 'LEDGER_CORRUPT'
  | 'LEDGER_IO'
  /** A fleet writer whose lease another worker took over: its appends and pushes are refused. */
  | 'LEDGER_FENCED'
  | 'BLOB_MISSING'
  | 'APPLY_REFUSED'
  | 'RUN_NOT_FOUND'
  /** A fleet worker refused a submitted run: its settings, repository or base break the worker's own policy. */
  | 'FLEET_POLICY'
  /** `acia resume` of a run that succeeded, failed verification or was aborted by a human. */
  | 'RUN_FINISHED'
  | 'BUDGET_EXCEEDED'
  | 'ABORTED'
  | 'MCP_SERVER_FAILED'
  | 'MCP_CALL_FAILED'
  | 'INTERNAL';

export class AciaError extends Error {
  readonly code: ErrorCode;
  /** A short hint telling the user how to fix it, printed after the message. */
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, options?: { hint?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AciaError';
    this.code = code;
    this.hint = options?.hint;
  }
}

export function isAciaError(e: unknown): e is AciaError {
  return e instanceof AciaError;
}

/** A message for any thrown value, without a stack. */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
