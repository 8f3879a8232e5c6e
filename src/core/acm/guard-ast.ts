// The AST of a guard expression, shared by the parser (guard.ts) and the evaluator (guard-eval.ts)
// so that neither imports the other.
export type CompareOp = '==' | '!=' | '<' | '<=' | '>' | '>=';
export type PathSegment = string | number;
export type GuardLiteral = string | number | boolean | null;

export type GuardNode =
  | { kind: 'literal'; value: GuardLiteral }
  /** `$t3.a[0]` is root 'task' with taskId 't3'; `facts.x` is parsed as root 'context' with segments ['facts', 'x']. */
  | { kind: 'path'; root: 'task' | 'policy' | 'context'; taskId?: string; segments: PathSegment[] }
  | { kind: 'not'; operand: GuardNode }
  | { kind: 'and' | 'or'; left: GuardNode; right: GuardNode }
  | { kind: 'compare'; op: CompareOp; left: GuardNode; right: GuardNode };
