// The `--json` NDJSON stream of run, resume, plan, exec and demo: one CliEvent per stdout line.
// RunResult mirrors team/team.ts's interface (core cannot import team); the e2e tests check real output against it.
import { z } from 'zod';
import { HumanAction, TerminalReason } from '../ledger/run-vocabulary.js';
import { StreamChunk } from './contracts.js';
import { StoredLedgerEntry } from '../ledger/entry-shape.js';
import { RunId } from './ids.js';

export const RunResultEvent = z.strictObject({
  runId: RunId,
  reason: TerminalReason,
  message: z.string(),
  runBranch: z.string(),
  runDir: z.string(),
  headCommit: z.string().nullable(),
  filesChanged: z.array(z.string()),
  costUsd: z.number().nullable(),
  tokens: z.number().int().nonnegative(),
  /** Spend per role (pm, dev, qa, and any role a plan or role file named), in the order the roles first spent. */
  roleCosts: z.array(z.strictObject({ role: z.string(), costUsd: z.number().nullable(), tokens: z.number().int().nonnegative(), calls: z.number().int().nonnegative() })),
  /** A runnable command that continues the run; absent when it is finished (succeeded, verification failed, aborted by a human). */
  resumeCommand: z.string().optional(),
  /** The answers the open question takes (`guidance` means free text). */
  answers: z.array(HumanAction).optional(),
  /** A budget stop: the flag that raises the limit the run hit. */
  raiseLimit: z.string().optional(),
  /** Set when the run stopped on an error: its code (LLM_AUTH: the API rejected the credentials; exit 2). */
  errorCode: z.string().optional(),
});
export type RunResultEvent = z.infer<typeof RunResultEvent>;

/** Ledger entries as they are appended, stream chunks as they arrive (tokens only with --debug), the result last. */
export const CliEvent = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('entry'), entry: StoredLedgerEntry }),
  z.strictObject({ kind: z.literal('chunk'), chunk: StreamChunk }),
  z.strictObject({ kind: z.literal('result'), result: RunResultEvent }),
]);
export type CliEvent = z.infer<typeof CliEvent>;
