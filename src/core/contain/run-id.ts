// The one pattern a run id must match before any command or server turns it into a path. Run ids come from
// directory names a clone can plant, from ACP's session/load, MCP tool arguments and URIs, fleet rows and the
// command line: each is checked here, so `../x`, `.ssh` or a name with a slash never reaches a path join.
import { AciaError } from '../errors.js';

/** Letters and digits first, then letters, digits, `.`, `_`, `-`; at most 128 characters; never `..`. */
export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function isRunId(value: unknown): value is string {
  return typeof value === 'string' && RUN_ID_PATTERN.test(value) && !value.includes('..');
}

/**
 * `value` as a run id, or RUN_NOT_FOUND naming it (quoted, so a hostile id shows as what it is). `where`
 * names the repository or database the run was looked for in.
 */
export function requireRunId(value: string, where: string, hint = 'list runs with `acia runs`'): string {
  if (!isRunId(value)) throw new AciaError('RUN_NOT_FOUND', `no run ${JSON.stringify(value)} in ${where}: not a run id (letters, digits, . _ -)`, { hint });
  return value;
}
