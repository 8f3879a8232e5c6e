// Turns zod issues into problems with JSON paths (`$.tasks[2].capability`), the form every validator reports.
import type { z } from 'zod';

export interface Problem {
  /** A JSON path from the document root, e.g. `$.tasks[2].capability`. */
  path: string;
  code: string;
  message: string;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export function jsonPath(segments: readonly PropertyKey[], base = '$'): string {
  let out = base;
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (typeof s === 'string' && IDENTIFIER.test(s)) out += `.${s}`;
    else out += `[${JSON.stringify(String(s))}]`;
  }
  return out;
}

/** One problem per issue; an unknown-keys issue becomes one problem per key, pointing at the key itself. */
export function zodProblems(error: z.ZodError, base = '$'): Problem[] {
  const problems: Problem[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        problems.push({ path: jsonPath([...issue.path, key], base), code: 'SCHEMA', message: `unknown field "${key}"` });
      }
      continue;
    }
    problems.push({ path: jsonPath(issue.path, base), code: 'SCHEMA', message: issue.message });
  }
  return problems;
}
