// What `acia validate` does for one file, without touching the filesystem: detect the kind, validate, summarise.
import { checkLedgerChain } from '../ledger/check-chain.js';
import { looksLikeSpecLedgerLine, specLedgerProblems } from '../ledger/spec-ledger-check.js';
import { defaultCapabilityMap } from './capabilities.js';
import { contentAddress } from './canonical-json.js';
import type { CapabilityMap } from './contracts.js';
import { parseDocumentText, parseJsonText } from './json-text.js';
import { isSchemaId, SCHEMA_IDS, schemaValidator } from './schema-validator.js';
import { validatePlan, validatePlanSet } from './validate-plan.js';
import { planFromSpec, planSetFromSpec, type SpecMapping } from './spec-names.js';
import { capabilityMapFromSpec, declaredKind, goalFromSpec, packetFromSpec, taskFromSpec } from './spec-documents.js';
import { inlineVerificationRefs, type SheetReader } from './verification-refs.js';
import { GuardSyntaxError, parseGuard } from './guard.js';
import { idemKeyProblems } from './idem-key.js';
import { zodProblems, type Problem } from './zod-paths.js';
import type { z } from 'zod';
import { Script } from '../llm/script.js';

export const DOCUMENT_KINDS = ['plan', 'plan-set', 'context-packet', 'ledger', 'acm-ledger', 'script', ...SCHEMA_IDS.filter((id) => !['plan', 'plan-set', 'context-packet'].includes(id))] as const;

export type DocumentResult =
  | { status: 'checked'; kind: string; ok: boolean; summary: string; errors: Problem[]; warnings: Problem[] }
  /** The text could not be read as the kind at all: not JSON, or no way to tell what it is. */
  | { status: 'unreadable'; message: string; line?: number; column?: number }
  | { status: 'unknown-kind'; message: string };

export interface ValidateDocumentOptions {
  kind?: string;
  caps?: CapabilityMap;
  /**
   * For scripts: the return_result shape of each agent role (core does not know the agents; the CLI
   * passes them), so a turn that returns a result the agent would reject is found before a run.
   */
  resultSchemas?: Record<string, z.ZodType>;
  /** A Context Packet's facts: plans' expressions may read only these. */
  facts?: Record<string, unknown>;
  /** Reads a Verification Sheet named by a task's verificationRefs (relative to this document); none: refs are errors. */
  readSheet?: SheetReader;
}

const DETECTION_HINT = 'looked for an ACM kind: (GoalCard, ContextPacket, PlanSet, TaskSpec, CapabilityMap), tasks+edges (plan), plans+selection (plan set), facts+provenance (context packet), intent+id (goal), seq+prevHash+hash lines (ledger), id+type+details lines (acm-ledger, the ACM spec Memory Ledger); pass --kind';

export function validateDocument(text: string, fileName: string, options: ValidateDocumentOptions = {}): DocumentResult {
  const caps = options.caps ?? defaultCapabilityMap;
  const asLedger = options.kind === 'ledger' || options.kind === 'acm-ledger' || (options.kind === undefined && (fileName.endsWith('.jsonl') || looksLikeLedgerLines(text)));
  if (asLedger) return validateLedgerText(text, options.kind);

  const parsed = parseDocumentText(text, fileName);
  if (!parsed.ok) return { status: 'unreadable', message: parsed.message, line: parsed.line, column: parsed.column };
  const value = parsed.value;
  const kind = options.kind ?? detectKind(value);
  if (kind === undefined) return { status: 'unknown-kind', message: `cannot tell what this is; ${DETECTION_HINT}` };

  switch (kind) {
    case 'script':
      return validateScript(value, options.resultSchemas ?? {});
    case 'plan': {
      // Written with the ACM spec's names (on_error, plan-level join, capabilityRef...): mapped first.
      const spec = planFromSpec(value);
      const refs = inlineVerificationRefs(spec.value, options.readSheet ?? noSheets);
      const r = validatePlan(spec.value, caps, { facts: options.facts ?? null });
      const tasks = r.plan?.tasks.length ?? countOf(value, 'tasks');
      const errors = [...spec.errors, ...refs, ...r.errors];
      return { status: 'checked', kind, ok: errors.length === 0, summary: `plan, ${tasks} tasks${specNote(spec.mapped)}`, errors, warnings: r.warnings };
    }
    case 'plan-set': {
      const spec = planSetFromSpec(value);
      const refs = inlineVerificationRefs(spec.value, options.readSheet ?? noSheets);
      const r = validatePlanSet(spec.value, caps, { facts: options.facts ?? null });
      const chosen = r.planSet ? `, chose ${r.planSet.selection.chosenPlanId}` : '';
      const errors = [...spec.errors, ...refs, ...r.errors];
      return { status: 'checked', kind, ok: errors.length === 0, summary: `plan set, ${countOf(value, 'plans')} plans${chosen}${specNote(spec.mapped)}`, errors, warnings: r.warnings };
    }
    default: {
      if (!isSchemaId(kind)) return { status: 'unknown-kind', message: `unknown kind '${kind}'; known: ${DOCUMENT_KINDS.join(', ')}` };
      const spec = SPEC_READERS[kind]?.(value) ?? { value, mapped: [], errors: [] };
      const extra = kind === 'task' ? [...inlineVerificationRefs(spec.value, options.readSheet ?? noSheets), ...taskExpressionProblems(spec.value, options.facts ?? null), ...taskCapabilityProblems(spec.value, caps)] : [];
      const r = schemaValidator.validate(spec.value, kind);
      const errors = [...spec.errors, ...r.problems, ...extra];
      const ok = errors.length === 0;
      const label = kind === 'context-packet' && ok ? `context packet, ${contentAddress(schemaValidator.coerce(spec.value, kind))}` : kind;
      return { status: 'checked', kind, ok, summary: `${label}${specNote(spec.mapped)}`, errors, warnings: [] };
    }
  }
}

/** Documents whose spec form (v0.5 envelope, snake_case names) is mapped before their schema is checked. */
const SPEC_READERS: Partial<Record<string, (value: unknown) => SpecMapping>> = {
  goal: goalFromSpec,
  'context-packet': packetFromSpec,
  task: taskFromSpec,
  'capability-map': capabilityMapFromSpec,
};

const noSheets: SheetReader = () => null;

/** A stand-alone Task Spec's expressions: they parse, and its idemKey names what it can (facts when known). */
function taskExpressionProblems(task: unknown, facts: Record<string, unknown> | null): Problem[] {
  const out: Problem[] = [];
  const t = task as { verification?: unknown; idemKey?: unknown } | null;
  if (Array.isArray(t?.verification)) {
    t.verification.forEach((expr, j) => {
      if (typeof expr !== 'string') return;
      try {
        parseGuard(expr);
      } catch (e) {
        if (!(e instanceof GuardSyntaxError)) throw e;
        out.push({ path: `$.verification[${j}]`, code: 'GUARD_SYNTAX', message: `verification expression: column ${e.column}: ${e.detail}` });
      }
    });
  }
  if (typeof t?.idemKey === 'string') for (const p of idemKeyProblems(t.idemKey, facts)) out.push({ path: '$.idemKey', code: 'IDEMKEY', message: p });
  return out;
}

/** A stand-alone Task Spec names a capability of the map, at the map's version or the capability's own. */
function taskCapabilityProblems(task: unknown, caps: CapabilityMap): Problem[] {
  const t = task as { capability?: unknown; capabilityVersion?: unknown } | null;
  if (typeof t?.capability !== 'string') return [];
  const cap = caps.capabilities.find((c) => c.name === t.capability);
  if (!cap) return [{ path: '$.capability', code: 'UNKNOWN_CAPABILITY', message: `unknown capability '${t.capability}' in capability map ${caps.version} (pass --capabilities <map> for another)` }];
  const v = t.capabilityVersion;
  if (typeof v === 'string' && v !== caps.version && v !== cap.version) return [{ path: '$.capabilityVersion', code: 'CAPABILITY_VERSION', message: `capabilityRef ${t.capability}@${v}: the map is '${caps.version}'${cap.version === undefined ? '' : ` and ${t.capability} is '${cap.version}'`}` }];
  return [];
}

function detectKind(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const declared = declaredKind(value);
  if (declared !== undefined) return declared;
  const has = (k: string): boolean => Object.hasOwn(value, k);
  if (has('tasks') && (has('edges') || has('capabilityMapVersion'))) return 'plan';
  if (has('plans') && (has('selection') || Array.isArray((value as { plans?: unknown }).plans))) return 'plan-set';
  if (has('facts') && has('provenance')) return 'context-packet';
  if (has('version') && has('turns')) return 'script';
  if (has('intent') && (has('id') || has('context_required') || has('contextRequired'))) return 'goal';
  return undefined;
}

function specNote(mapped: string[]): string {
  return mapped.length === 0 ? '' : ` (read with ACM spec names: ${mapped.length} mapped, e.g. ${mapped[0]})`;
}

function countOf(value: unknown, key: string): number {
  if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return 0;
  const v = (value as Record<string, unknown>)[key];
  return Array.isArray(v) ? v.length : 0;
}

function looksLikeLedgerLines(text: string): boolean {
  const first = text.split('\n', 1)[0] ?? '';
  const parsed = parseJsonText(first);
  if (!parsed.ok || typeof parsed.value !== 'object' || parsed.value === null) return false;
  return ['seq', 'prevHash', 'hash'].every((k) => Object.hasOwn(parsed.value as object, k)) && text.trimEnd().includes('\n');
}

/** ACIA's hash-chained ledger, or (`acm-ledger`, or detected by its first line) the spec's Memory Ledger. */
function validateLedgerText(text: string, kind: string | undefined): DocumentResult {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const entries: unknown[] = [];
  for (const [i, line] of lines.entries()) {
    const parsed = parseJsonText(line);
    if (!parsed.ok) return { status: 'unreadable', message: `ledger line is not JSON: ${parsed.message}`, line: i + 1, column: parsed.column };
    entries.push(parsed.value);
  }
  const spec = kind === 'acm-ledger' || (kind === undefined && looksLikeSpecLedgerLine(entries[0]));
  const [found, label] = spec ? ['acm-ledger', 'ACM memory ledger'] : ['ledger', 'ledger'];
  if (entries.length === 0) return { status: 'checked', kind: found, ok: false, summary: `${label}, 0 entries`, errors: [{ path: '$', code: 'LEDGER_EMPTY', message: 'the ledger has no entries' }], warnings: [] };
  const errors = spec ? specLedgerProblems(entries) : checkLedgerChain(entries);
  return { status: 'checked', kind: found, ok: errors.length === 0, summary: `${label}, ${entries.length} entries`, errors, warnings: [] };
}

/**
 * A scripted-model script: its format, then each return_result against the shape of the agent whose
 * caller it answers (pm, dev:<task>, qa:<task>). A wrong result shape is an error: the agent would
 * reject it at run time and the run would burn its repairs.
 */
function validateScript(value: unknown, resultSchemas: Record<string, z.ZodType>): DocumentResult {
  const parsed = Script.safeParse(value);
  if (!parsed.success) return { status: 'checked', kind: 'script', ok: false, summary: 'script', errors: zodProblems(parsed.error), warnings: [] };
  const errors: Problem[] = [];
  const warnings: Problem[] = [];
  parsed.data.turns.forEach((turn, i) => {
    const role = turn.caller.split(':')[0] ?? '';
    const schema = resultSchemas[role];
    if (!schema && Object.keys(resultSchemas).length > 0 && !turn.caller.endsWith('*')) {
      warnings.push({ path: `$.turns[${i}].caller`, code: 'UNKNOWN_CALLER', message: `no agent calls as "${turn.caller}" (callers: pm, dev:<task>, qa:<task>)` });
    }
    (turn.toolCalls ?? []).forEach((call, j) => {
      if (call.name !== 'return_result' || !schema) return;
      const r = schema.safeParse(call.input);
      if (!r.success) errors.push(...zodProblems(r.error, `$.turns[${i}].toolCalls[${j}].input`).map((p) => ({ ...p, message: `${role} result: ${p.message}` })));
    });
  });
  return { status: 'checked', kind: 'script', ok: errors.length === 0, summary: `script, ${parsed.data.turns.length} turns`, errors, warnings };
}
