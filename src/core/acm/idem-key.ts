// Idempotency keys (ACM v0.5 §5.5, §6.3 step 3): a Task Spec's `idemKey` is a stable key expression such as
// `${goal.id}-${context.facts.orderId}`. Two tasks of a run whose keys resolve to the same string do the
// same work: the engine runs the first and reuses its recorded result for the second.

/** What a key may refer to. Anything else is an error at validation and at run time, never an empty string. */
export interface IdemScope {
  goalId: string;
  planId: string;
  taskId: string;
  facts: Record<string, unknown>;
}

export class IdemKeyError extends Error {
  constructor(readonly detail: string) {
    super(detail);
    this.name = 'IdemKeyError';
  }
}

const PLACEHOLDER = /\$\{([^}]*)\}/g;
const FACT = /^(?:context\.)?facts\.([A-Za-z_][A-Za-z0-9_-]*)$/;

/** The references a key template makes (`goal.id`, `context.facts.orderId`...), in order. */
export function idemKeyRefs(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].map((m) => (m[1] ?? '').trim());
}

/** Problems with a template's references, given the facts when they are known (null: unknown yet). */
export function idemKeyProblems(template: string, facts: Record<string, unknown> | null): string[] {
  const problems: string[] = [];
  if (template.replace(PLACEHOLDER, '').includes('${')) problems.push('an unclosed ${ in the key');
  for (const ref of idemKeyRefs(template)) {
    if (ref === 'goal.id' || ref === 'plan.id' || ref === 'task.id') continue;
    const fact = FACT.exec(ref);
    if (!fact) problems.push(`\${${ref}} is not goal.id, plan.id, task.id or context.facts.<name>`);
    else if (facts !== null && !Object.hasOwn(facts, fact[1]!)) problems.push(`\${${ref}}: the Context Packet has no fact '${fact[1]!}'`);
  }
  return problems;
}

/**
 * The key a task runs under: its declared template resolved over the run, or, when it declares none, one
 * unique to the task in its plan (so undeclared keys never make two tasks one).
 */
export function resolveIdemKey(template: string | undefined, scope: IdemScope): string {
  if (template === undefined) return `${scope.goalId}/${scope.planId}/${scope.taskId}`;
  const problems = idemKeyProblems(template, scope.facts);
  if (problems.length > 0) throw new IdemKeyError(`idemKey ${template}: ${problems.join('; ')}`);
  return template.replace(PLACEHOLDER, (_, raw: string) => {
    const ref = raw.trim();
    if (ref === 'goal.id') return scope.goalId;
    if (ref === 'plan.id') return scope.planId;
    if (ref === 'task.id') return scope.taskId;
    const value = scope.facts[FACT.exec(ref)![1]!];
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}
