// Seed 003's ISchemaValidator: named schemas, validate (problems with JSON paths) and coerce (defaults applied).
import type { z } from 'zod';
import { Config } from '../config/schema.js';
import { AciaError } from '../errors.js';
import { CliEvent } from './cli-events.js';
import { CapabilityMap, ContextPacket, Goal, Plan, PlanSet, StreamChunk, TaskSpec, ToolDescriptor } from './contracts.js';
import { StoredLedgerEntry } from '../ledger/entry-shape.js';
import { zodProblems, type Problem } from './zod-paths.js';
import { HookInput } from '../hooks/input.js';

export const SCHEMAS = {
  plan: Plan,
  'plan-set': PlanSet,
  'context-packet': ContextPacket,
  'ledger-entry': StoredLedgerEntry,
  'stream-chunk': StreamChunk,
  'tool-descriptor': ToolDescriptor,
  task: TaskSpec,
  config: Config,
  goal: Goal,
  'capability-map': CapabilityMap,
  /** One line of the `--json` NDJSON stream. */
  events: CliEvent,
  /** What a command hook reads on stdin (docs/hooks.md). */
  'hook-input': HookInput,
} as const satisfies Record<string, z.ZodType>;

export type SchemaId = keyof typeof SCHEMAS;
export const SCHEMA_IDS = Object.keys(SCHEMAS) as SchemaId[];

export interface ValidationResult {
  ok: boolean;
  problems: Problem[];
}

export interface SchemaValidator {
  validate(json: unknown, schemaId: SchemaId): ValidationResult;
  /** The value with defaults applied; throws AciaError('INPUT_INVALID') listing every problem. */
  coerce<Id extends SchemaId>(json: unknown, schemaId: Id): z.output<(typeof SCHEMAS)[Id]>;
}

export function isSchemaId(id: string): id is SchemaId {
  return Object.hasOwn(SCHEMAS, id);
}

function schemaFor(schemaId: string): z.ZodType {
  if (!isSchemaId(schemaId)) throw new AciaError('USAGE', `unknown schema id '${schemaId}'; known: ${SCHEMA_IDS.join(', ')}`);
  return SCHEMAS[schemaId];
}

export const schemaValidator: SchemaValidator = {
  validate(json, schemaId) {
    const result = schemaFor(schemaId).safeParse(json);
    return result.success ? { ok: true, problems: [] } : { ok: false, problems: zodProblems(result.error) };
  },
  coerce<Id extends SchemaId>(json: unknown, schemaId: Id) {
    const result = schemaFor(schemaId).safeParse(json);
    if (result.success) return result.data as z.output<(typeof SCHEMAS)[Id]>;
    const problems = zodProblems(result.error);
    throw new AciaError('INPUT_INVALID', `not a valid ${schemaId}: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
  },
};
