// Files `acia exec` and `acia plan --context` take: a saved plan or plan set and a Context Packet, in ACIA's
// form or the ACM v0.5 spec's, JSON or YAML, checked in full before a run exists (bad input is exit 2).
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ContextPacket, type PlanSet } from '../core/acm/contracts.js';
import { defaultCapabilityMap } from '../core/acm/capabilities.js';
import { parseDocumentText } from '../core/acm/json-text.js';
import { packetFromSpec } from '../core/acm/spec-documents.js';
import { planFromSpec, planSetFromSpec } from '../core/acm/spec-names.js';
import { validatePlanSet } from '../core/acm/validate-plan.js';
import { inlineVerificationRefs } from '../core/acm/verification-refs.js';
import { zodProblems } from '../core/acm/zod-paths.js';
import { AciaError } from '../core/errors.js';

/** A JSON or YAML file given on the command line, parsed; a missing or malformed file is bad input (exit 2). */
function readDocument(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new AciaError(code === 'ENOENT' ? 'FILE_NOT_FOUND' : 'INPUT_INVALID', code === 'ENOENT' ? `no such file: ${file}` : `cannot read ${file}: ${(e as Error).message}`);
  }
  const parsed = parseDocumentText(text, file);
  if (!parsed.ok) throw new AciaError('JSON_PARSE', `${file} is not valid ${/\.ya?ml$/i.test(file) ? 'YAML' : 'JSON'}: line ${parsed.line} column ${parsed.column}: ${parsed.message}`);
  return parsed.value;
}

/** A Verification Sheet a plan's verificationRefs name; null when it cannot be read (the ref is then an error). */
function readSheet(path: string): unknown {
  try {
    const parsed = parseDocumentText(readFileSync(path, 'utf8'), path);
    return parsed.ok ? parsed.value : null;
  } catch {
    return null;
  }
}

/** A Context Packet file for `acia plan --context`: checked in full before a run exists, so bad input is exit 2. */
export function readContextPacket(file: string): ContextPacket {
  // ACIA's own packet, or one in the v0.5 spec's form (§5.3: metadata envelope, constraints_inherited...).
  const packet = ContextPacket.safeParse(packetFromSpec(readDocument(file)).value);
  if (!packet.success) {
    const first = zodProblems(packet.error)[0];
    throw new AciaError('INPUT_INVALID', `${file} is not a Context Packet: ${first?.path ?? '$'}: ${first?.message ?? 'invalid'}`, { hint: `see every problem with \`acia validate --kind context-packet ${file}\`` });
  }
  return packet.data;
}

export function readPlanFile(file: string): { file: string; planSet: PlanSet } {
  const value = readDocument(file);
  // A bare plan becomes a plan set of one, chosen by the human who runs it.
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AciaError('INPUT_INVALID', `${file} is not a plan: expected a JSON object (a plan set from \`acia plan --out\`, or one plan)`);
  }
  // Plans written with the ACM spec's names (on_error, plan-level join, capabilityRef...) are mapped first.
  const spec = 'plans' in value ? planSetFromSpec(value) : planFromSpec(value);
  const doc = spec.value as Record<string, unknown>;
  // Checks a task names by reference (`verificationRefs`, a Verification Sheet beside the plan) join its own.
  const errors = [...spec.errors, ...inlineVerificationRefs(doc, (ref) => readSheet(resolve(dirname(file), ref)))];
  if (errors.length > 0) throw new AciaError('INPUT_INVALID', `${file} is not a valid plan: ${errors[0]!.path}: ${errors[0]!.message}`);
  const set =
    'plans' in doc
      ? doc
      : { goalId: doc.goalId, contextRef: doc.contextRef, plans: [doc], selection: { method: 'human', chosenPlanId: doc.id, rationale: 'saved plan' } };
  // Checked in full (structure, cycles, capabilities) before a run exists: a bad file is bad input, exit 2.
  const checked = validatePlanSet(set, defaultCapabilityMap);
  if (!checked.ok || !checked.planSet) {
    const first = checked.errors[0];
    const more = checked.errors.length > 1 ? ` (+${checked.errors.length - 1} more)` : '';
    throw new AciaError('INPUT_INVALID', `${file} is not a valid plan: ${first?.path ?? '$'}: ${first?.message ?? 'invalid plan'}${more}`, { hint: `see every problem with \`acia validate ${file}\`` });
  }
  return { file, planSet: checked.planSet };
}
