// A Task Spec's `verificationRefs` (ACM 002 §15, v0.5 §5.5) name checks of a Verification Sheet (§5.8) as
// `<sheet file>#<check id>`. ACIA evaluates expressions, so each reference is read and its assertions' `expr`
// are added to the task's `verification`, where validation parses them and the run evaluates them like any
// other. A reference that cannot be read is an error: a declared check is never silently dropped.
import type { Problem } from './zod-paths.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads a sheet by the file part of a reference (relative to the document that names it); null when it cannot. */
export type SheetReader = (file: string) => unknown;

/** The assertions' expressions of one check of a sheet (the spec's shape: `checks.<id>.assertions[].expr`). */
function checkExpressions(sheet: unknown, id: string): string[] | string {
  if (!isObj(sheet) || !isObj(sheet.checks)) return 'it is not a Verification Sheet (no checks)';
  const check = sheet.checks[id];
  if (!isObj(check) || !Array.isArray(check.assertions)) return `it has no check '${id}' with assertions`;
  const exprs = check.assertions.map((a) => (isObj(a) ? a.expr : undefined));
  if (exprs.some((e) => typeof e !== 'string' || e === '')) return `check '${id}' has an assertion without an expr`;
  return exprs as string[];
}

/**
 * Adds the expressions of every task's verificationRefs to its `verification`, in place (tasks of a plan,
 * of a set's plans, or one Task Spec). Returns the references it could not resolve, at their paths.
 */
export function inlineVerificationRefs(doc: unknown, read: SheetReader): Problem[] {
  const problems: Problem[] = [];
  const onTask = (task: unknown, path: string): void => {
    if (!isObj(task) || !Array.isArray(task.verificationRefs)) return;
    const verification = Array.isArray(task.verification) ? [...(task.verification as unknown[])] : [];
    task.verificationRefs.forEach((ref, i) => {
      const at = `${path}.verificationRefs[${i}]`;
      const hash = typeof ref === 'string' ? ref.lastIndexOf('#') : -1;
      if (typeof ref !== 'string' || hash <= 0 || hash === ref.length - 1) {
        problems.push({ path: at, code: 'VERIFICATION_REF', message: `${JSON.stringify(ref)} is not <sheet file>#<check id>` });
        return;
      }
      const file = ref.slice(0, hash);
      const sheet = read(file);
      const exprs = sheet === null ? `cannot read ${file}` : checkExpressions(sheet, ref.slice(hash + 1));
      if (typeof exprs === 'string') problems.push({ path: at, code: 'VERIFICATION_REF', message: `${ref}: ${exprs}` });
      else for (const e of exprs) if (!verification.includes(e)) verification.push(e);
    });
    task.verification = verification;
  };
  const onPlan = (plan: unknown, path: string): void => {
    if (isObj(plan) && Array.isArray(plan.tasks)) plan.tasks.forEach((t, i) => onTask(t, `${path}.tasks[${i}]`));
  };
  if (isObj(doc) && Array.isArray(doc.plans)) doc.plans.forEach((p, i) => onPlan(p, `$.plans[${i}]`));
  else if (isObj(doc) && Array.isArray(doc.tasks)) onPlan(doc, '$');
  else onTask(doc, '$');
  return problems;
}
