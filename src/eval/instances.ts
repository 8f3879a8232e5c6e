// Eval task sets: SWE-bench-style instances, one JSON object a line, validated with zod. A bad line is
// one error naming the file, the line and the field.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { AciaError, errorMessage } from '../core/errors.js';

/** SWE-bench ships FAIL_TO_PASS / PASS_TO_PASS as JSON-encoded strings; plain arrays are accepted too. */
const TestList = z
  .union([z.array(z.string().min(1)), z.string()])
  .transform((v, ctx) => {
    if (Array.isArray(v)) return v;
    try {
      const parsed: unknown = JSON.parse(v);
      if (Array.isArray(parsed) && parsed.every((x) => typeof x === 'string')) return parsed;
    } catch {
      // reported below
    }
    ctx.addIssue({ code: 'custom', message: 'expected a list of test names (an array, or a JSON string of one)' });
    return z.NEVER;
  });

/**
 * The fields ACIA reads. Others SWE-bench carries (`patch`, `version`, `created_at`...) are allowed and
 * ignored; the gold `patch` in particular never reaches the agents.
 */
export const EvalInstance = z.looseObject({
  instance_id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'letters, digits, ".", "_" and "-" (it names files)'),
  repo: z.string().min(1),
  base_commit: z.string().regex(/^[0-9a-f]{7,40}$/, 'a commit id (7 to 40 hex digits)'),
  problem_statement: z.string().min(1),
  hints_text: z.string().optional(),
  test_patch: z.string().default(''),
  FAIL_TO_PASS: TestList.default([]),
  PASS_TO_PASS: TestList.default([]),
  test_command: z.string().min(1),
  setup: z.union([z.array(z.string().min(1)), z.string().min(1).transform((s) => [s])]).default([]),
});
export type EvalInstance = z.infer<typeof EvalInstance>;

export interface LoadedInstance extends EvalInstance {
  /** `repo` as cloned: a URL as given, a local path made absolute against the task file's directory. */
  repoSource: string;
  /** Where the instance was read, for messages: `tasks.jsonl:3`. */
  origin: string;
}

export function isRemoteRepo(repo: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(repo) || /^[\w.-]+@[\w.-]+:/.test(repo);
}

/** The task files named by `path`: the file itself, or every `*.jsonl` directly in a directory. */
export function taskFiles(path: string): string[] {
  const abs = resolve(path);
  if (!existsSync(abs)) throw new AciaError('FILE_NOT_FOUND', `no such task file or directory: ${path}`);
  if (!statSync(abs).isDirectory()) return [abs];
  const files = readdirSync(abs)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()
    .map((f) => join(abs, f));
  if (files.length === 0) throw new AciaError('INPUT_INVALID', `${path} holds no *.jsonl task file`);
  return files;
}

export function loadInstances(path: string): LoadedInstance[] {
  const out: LoadedInstance[] = [];
  const seen = new Map<string, string>();
  for (const file of taskFiles(path)) {
    const lines = readFileSync(file, 'utf8').split('\n');
    for (const [i, raw] of lines.entries()) {
      const line = raw.trim();
      if (line === '') continue;
      const origin = `${basename(file)}:${i + 1}`;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (e) {
        throw new AciaError('INPUT_INVALID', `${file}:${i + 1}: not JSON: ${errorMessage(e)}`);
      }
      const parsed = EvalInstance.safeParse(value);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const where = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : '$';
        throw new AciaError('INPUT_INVALID', `${file}:${i + 1}: ${where}: ${issue?.message ?? 'invalid instance'}`, {
          hint: 'each line is one instance: instance_id, repo, base_commit, problem_statement, test_command, and optionally hints_text, test_patch, FAIL_TO_PASS, PASS_TO_PASS, setup',
        });
      }
      const inst = parsed.data;
      const before = seen.get(inst.instance_id);
      if (before !== undefined) throw new AciaError('INPUT_INVALID', `${file}:${i + 1}: instance_id "${inst.instance_id}" already used at ${before}`);
      seen.set(inst.instance_id, origin);
      const repoSource = isRemoteRepo(inst.repo) || isAbsolute(inst.repo) ? inst.repo : resolve(dirname(file), inst.repo);
      out.push({ ...inst, repoSource, origin });
    }
  }
  if (out.length === 0) throw new AciaError('INPUT_INVALID', `no instances in ${path}`);
  return out;
}

/** The goal the team is given: the problem statement, and the hints when the set has them. */
export function goalOf(inst: EvalInstance): string {
  const hints = inst.hints_text?.trim();
  return hints ? `${inst.problem_statement.trim()}\n\nHints:\n${hints}` : inst.problem_statement.trim();
}
