// The expressions inside a plan, checked before it runs: edge guards and task verification expressions
// (the guard language, docs/guards.md), and idemKey templates. What they read must be recorded by the time
// they are evaluated — an earlier task's output, or a fact the Context Packet has — or the plan is
// refused: at run time a typo would read null and silently flip a branch or fail a check.
import type { GuardNode } from './guard-ast.js';
import { guardPathRefs, guardTaskRefs, GuardSyntaxError, parseGuard } from './guard.js';
import { idemKeyProblems } from './idem-key.js';
import type { Plan } from './contracts.js';
import { ancestorsOf } from './plan-graph.js';
import type { Problem } from './zod-paths.js';

export interface ExpressionFindings {
  errors: Problem[];
  warnings: Problem[];
}

/** The fact names an expression reads (`facts.x`, `context.facts["x"]`). */
export function guardFactRefs(node: GuardNode): string[] {
  return guardPathRefs(node, (p) => (p.root === 'context' && p.segments[0] === 'facts' && p.segments.length >= 2 ? String(p.segments[1]) : undefined));
}

/**
 * `facts`: the Context Packet's facts when known (planning, `acia exec`, `acia validate --context`); null
 * when not (a plan file alone names its packet only by hash): facts are then checked when it runs.
 */
export function checkPlanExpressions(plan: Plan, base: string, facts: Record<string, unknown> | null): ExpressionFindings {
  const out: ExpressionFindings = { errors: [], warnings: [] };
  const err = (path: string, code: string, message: string): void => void out.errors.push({ path: base + path, code, message });
  const ids = new Set(plan.tasks.map((t) => t.id));
  const nodes = [...ids];

  /** Parses one expression and checks what it reads; `allowed` are the tasks whose output is recorded by then. */
  const check = (source: string, path: string, what: 'guard' | 'verification', allowed: Set<string> | null): void => {
    let node: GuardNode;
    try {
      node = parseGuard(source);
    } catch (e) {
      if (!(e instanceof GuardSyntaxError)) throw e;
      err(path, 'GUARD_SYNTAX', `${what === 'guard' ? '' : 'verification expression: '}column ${e.column}: ${e.detail}`);
      return;
    }
    const prefix = what === 'guard' ? 'GUARD' : 'VERIFICATION';
    for (const ref of guardTaskRefs(node)) {
      if (!ids.has(ref)) err(path, `${prefix}_UNKNOWN_TASK`, `${what} reads $${ref}, which is not a task of this plan`);
      else if (allowed !== null && !allowed.has(ref)) err(path, `${prefix}_NOT_PREDECESSOR`, `${what} reads $${ref}, which does not run before it, so its output is not recorded yet`);
    }
    for (const fact of guardFactRefs(node)) {
      if (facts !== null && !Object.hasOwn(facts, fact)) {
        err(path, `${prefix}_UNKNOWN_FACT`, `${what} reads the fact '${fact}', which the Context Packet does not have (it has: ${Object.keys(facts).sort().join(', ') || 'none'})`);
      }
    }
  };

  plan.edges.forEach((edge, i) => {
    if (edge.guard === undefined) return;
    const allowed = ids.has(edge.from) ? new Set([...ancestorsOf(edge.from, nodes, plan.edges), edge.from]) : null;
    check(edge.guard, `.edges[${i}].guard`, 'guard', allowed);
  });
  plan.tasks.forEach((task, i) => {
    // A task's expressions run over its own output and those of the tasks before it.
    const allowed = task.verification.length === 0 ? null : new Set([...ancestorsOf(task.id, nodes, plan.edges), task.id]);
    task.verification.forEach((expr, j) => check(expr, `.tasks[${i}].verification[${j}]`, 'verification', allowed));
    if (task.idemKey !== undefined) for (const problem of idemKeyProblems(task.idemKey, facts)) err(`.tasks[${i}].idemKey`, 'IDEMKEY', problem);
  });
  return out;
}
