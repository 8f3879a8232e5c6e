// One result file per finished instance under <out>/instances/, written atomically (temp file, fsync,
// rename): after a kill -9 a rerun finds each instance either finished or not, never half-written.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { TerminalReason } from '../core/ledger/run-vocabulary.js';

const Status = z.enum(['passed', 'failed', 'missing']);

export const InstanceResult = z.object({
  instance_id: z.string(),
  model_name_or_path: z.string(),
  model_patch: z.string(),
  resolved: z.boolean(),
  reason: TerminalReason,
  message: z.string(),
  runId: z.string().nullable(),
  /** Absolute paths, so the report can link them. */
  ledger: z.string().nullable(),
  wiki: z.string().nullable(),
  runBranch: z.string().nullable(),
  headCommit: z.string().nullable(),
  costUsd: z.number().nullable(),
  tokens: z.number(),
  wallMs: z.number(),
  failToPass: z.record(z.string(), Status),
  passToPass: z.record(z.string(), Status),
  gradeError: z.string().optional(),
  /** Files the model's patch changed that decide how tests run (test files, runner config, test scripts): not graded from the patch. */
  tampered_files: z.array(z.string()).optional(),
  finishedAt: z.string(),
});
export type InstanceResult = z.infer<typeof InstanceResult>;

export function resultsDir(out: string): string {
  return join(out, 'instances');
}

/** Writes `text` to `path` so that a reader (or a crash) sees the old file or the new one, never a mix. */
export function writeFileAtomic(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  const dirFd = openSync(dirname(path), 'r');
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
}

export function writeResult(out: string, result: InstanceResult): void {
  writeFileAtomic(join(resultsDir(out), `${result.instance_id}.json`), `${JSON.stringify(InstanceResult.parse(result), null, 2)}\n`);
}

/** Finished instances in `out`; a file that does not parse (written by something else) is ignored and redone. */
export function readResults(out: string): Map<string, InstanceResult> {
  const dir = resultsDir(out);
  const found = new Map<string, InstanceResult>();
  if (!existsSync(dir)) return found;
  for (const f of readdirSync(dir).sort()) {
    if (!f.endsWith('.json')) continue;
    try {
      const r = InstanceResult.parse(JSON.parse(readFileSync(join(dir, f), 'utf8')));
      if (`${r.instance_id}.json` === f) found.set(r.instance_id, r);
    } catch {
      continue;
    }
  }
  return found;
}
