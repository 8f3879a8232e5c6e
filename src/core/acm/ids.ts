// Branded identifiers (seed 003): a RunId is not a StepId is not a plain string.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { RUN_ID_PATTERN } from '../contain/run-id.js';

/** The containment module's pattern (core/contain/run-id.ts): one definition of what names a run. */
export const RunId = z.string().regex(RUN_ID_PATTERN, 'run id: letters, digits, . _ -').refine((s) => !s.includes('..'), 'run id: never ".."').brand<'RunId'>();
export type RunId = z.infer<typeof RunId>;
export const StepId = z.string().min(1).max(200).brand<'StepId'>();
export type StepId = z.infer<typeof StepId>;
export const Seq = z.number().int().nonnegative().brand<'Seq'>();
export type Seq = z.infer<typeof Seq>;

export const asRunId = (s: string): RunId => RunId.parse(s);
export const asStepId = (s: string): StepId => StepId.parse(s);
export const asSeq = (n: number): Seq => Seq.parse(n);

/** A source of ids; tests inject a fixed one so runs are byte-identical. */
export interface IdSource {
  runId(now: Date): RunId;
}

/** Run ids sort by time: `20261123-065501-ab12cd`. */
export const randomIds: IdSource = {
  runId(now: Date): RunId {
    const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
    return asRunId(`${stamp}-${randomBytes(3).toString('hex')}`);
  },
};

export interface Clock {
  now(): Date;
}
export const systemClock: Clock = { now: () => new Date() };
