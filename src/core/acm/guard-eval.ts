// Evaluates a parsed guard over recorded facts only: task outputs, the context packet's facts and policy results.
import { FORBIDDEN_FIELDS } from './guard-lexer.js';
import type { GuardNode, PathSegment } from './guard-ast.js';

export interface GuardScope {
  /** Recorded task outputs by task id. */
  tasks: Record<string, unknown>;
  context: { facts: Record<string, unknown> };
  policy: Record<string, unknown>;
}

type Value = string | number | boolean | null | object;

/**
 * The guard's boolean value. Only the boolean `true` counts as true: `!`, `&&`, `||` and the final
 * result treat every other value (null, 1, "yes", objects) as false. Missing paths read as null.
 */
export function evaluateGuard(node: GuardNode, scope: GuardScope): boolean {
  return evaluate(node, scope) === true;
}

function evaluate(node: GuardNode, scope: GuardScope): Value {
  switch (node.kind) {
    case 'literal':
      return node.value;
    case 'path':
      return readPath(node.root === 'task' ? ownMember(scope.tasks, node.taskId ?? '') : rootOf(node.root, scope), node.segments);
    case 'not':
      return evaluate(node.operand, scope) !== true;
    case 'and':
      return evaluate(node.left, scope) === true && evaluate(node.right, scope) === true;
    case 'or':
      return evaluate(node.left, scope) === true || evaluate(node.right, scope) === true;
    case 'compare': {
      const left = evaluate(node.left, scope);
      const right = evaluate(node.right, scope);
      switch (node.op) {
        case '==':
          return strictEqual(left, right);
        case '!=':
          return !strictEqual(left, right);
        default:
          return order(node.op, left, right);
      }
    }
  }
}

function rootOf(root: 'policy' | 'context', scope: GuardScope): Value {
  return toValue(root === 'policy' ? scope.policy : scope.context);
}

function readPath(start: Value, segments: readonly PathSegment[]): Value {
  let current = start;
  for (const segment of segments) {
    if (current === null) return null;
    current = ownMember(current, segment);
  }
  return current;
}

/** Only own, non-prototype members are reachable: arrays by index, objects by own key, nothing else. */
function ownMember(container: unknown, segment: PathSegment): Value {
  if (typeof container !== 'object' || container === null) return null;
  if (Array.isArray(container)) {
    if (typeof segment !== 'number' || segment < 0 || segment >= container.length) return null;
    return toValue(container[segment]);
  }
  if (typeof segment !== 'string' || FORBIDDEN_FIELDS.has(segment)) return null;
  if (!Object.hasOwn(container, segment)) return null;
  const descriptor = Object.getOwnPropertyDescriptor(container, segment);
  // a getter would run code during evaluation; recorded facts are plain data, so refuse it
  if (descriptor === undefined || !('value' in descriptor)) return null;
  return toValue(descriptor.value);
}

function toValue(v: unknown): Value {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      return Number.isFinite(v) ? v : null;
    case 'object':
      return v;
    default:
      return null;
  }
}

/** Same type and same value; arrays and objects compare structurally over own enumerable members. */
function strictEqual(a: Value, b: Value, depth = 0): boolean {
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (depth > 100) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a).filter((k) => !FORBIDDEN_FIELDS.has(k));
  const kb = Object.keys(b).filter((k) => !FORBIDDEN_FIELDS.has(k));
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && strictEqual(ownMember(a, keyOf(a, k)), ownMember(b, keyOf(b, k)), depth + 1));
}

function keyOf(container: object, key: string): PathSegment {
  return Array.isArray(container) ? Number(key) : key;
}

function order(op: '<' | '<=' | '>' | '>=', a: Value, b: Value): boolean {
  const comparable = (typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string');
  if (!comparable) return false;
  switch (op) {
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
  }
}
