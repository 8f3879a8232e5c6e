// The guard expression language of ACM §13: a recursive-descent parser to a small AST (no eval, no Function).
// Grammar and semantics: docs/guards.md. Evaluation lives in guard-eval.ts.
import type { CompareOp, GuardNode, PathSegment } from './guard-ast.js';
import { FORBIDDEN_FIELDS, GuardSyntaxError, tokenize, type Token } from './guard-lexer.js';

export type { CompareOp, GuardLiteral, GuardNode, PathSegment } from './guard-ast.js';
export { FORBIDDEN_FIELDS, GuardSyntaxError, MAX_GUARD_LENGTH } from './guard-lexer.js';
export { evaluateGuard, type GuardScope } from './guard-eval.js';

/** Parentheses and `!` may nest this deep; deeper input is rejected rather than risking the stack. */
export const MAX_GUARD_DEPTH = 64;

const COMPARE_OPS: ReadonlySet<string> = new Set(['==', '!=', '<', '<=', '>', '>=']);

export function parseGuard(source: string): GuardNode {
  return new Parser(source).parse();
}

/** The task ids a guard reads (`$t3` -> 't3'), sorted and without duplicates. */
export function guardTaskRefs(node: GuardNode): string[] {
  return guardPathRefs(node, (p) => p.taskId);
}

/** What `pick` names of each path a guard reads (undefined: nothing), sorted and without duplicates. */
export function guardPathRefs(node: GuardNode, pick: (path: GuardNode & { kind: 'path' }) => string | undefined): string[] {
  const refs = new Set<string>();
  const visit = (n: GuardNode): void => {
    switch (n.kind) {
      case 'literal':
        return;
      case 'path': {
        const ref = pick(n);
        if (ref !== undefined) refs.add(ref);
        return;
      }
      case 'not':
        visit(n.operand);
        return;
      case 'and':
      case 'or':
      case 'compare':
        visit(n.left);
        visit(n.right);
        return;
    }
  };
  visit(node);
  return [...refs].sort();
}

class Parser {
  private readonly tokens: Token[];
  private pos = 0;
  private depth = 0;

  constructor(private readonly source: string) {
    this.tokens = tokenize(source);
  }

  parse(): GuardNode {
    if (this.peek().kind === 'eof') throw this.error(this.peek(), 'empty guard');
    const node = this.parseOr();
    const next = this.peek();
    if (next.kind !== 'eof') throw this.error(next, `unexpected ${describe(next)}; expected '&&', '||' or the end`);
    return node;
  }

  private parseOr(): GuardNode {
    let left = this.parseAnd();
    while (this.isOp('||')) {
      this.pos++;
      left = { kind: 'or', left, right: this.parseAnd() };
    }
    return left;
  }

  private parseAnd(): GuardNode {
    let left = this.parseNot();
    while (this.isOp('&&')) {
      this.pos++;
      left = { kind: 'and', left, right: this.parseNot() };
    }
    return left;
  }

  // `!` binds looser than comparison, so `!$t1.risk == 'HIGH'` reads as "not (risk is HIGH)".
  private parseNot(): GuardNode {
    if (this.isOp('!')) {
      const bang = this.next();
      this.enter(bang);
      const operand = this.parseNot();
      this.depth--;
      return { kind: 'not', operand };
    }
    return this.parseCompare();
  }

  private parseCompare(): GuardNode {
    const left = this.parsePrimary();
    const op = this.peek();
    if (op.kind !== 'op' || !COMPARE_OPS.has(op.text)) return left;
    this.pos++;
    const right = this.parsePrimary();
    const after = this.peek();
    if (after.kind === 'op' && COMPARE_OPS.has(after.text)) {
      throw this.error(after, "comparisons cannot be chained; join them with '&&'");
    }
    return { kind: 'compare', op: op.text as CompareOp, left, right };
  }

  private parsePrimary(): GuardNode {
    const t = this.next();
    switch (t.kind) {
      case 'string':
        return { kind: 'literal', value: t.text };
      case 'number':
        return { kind: 'literal', value: t.value ?? Number(t.text) };
      case 'task':
        return { kind: 'path', root: 'task', taskId: t.text, segments: this.parseSegments() };
      case 'ident':
        return this.parseName(t);
      case 'punct':
        if (t.text === '(') {
          this.enter(t);
          const inner = this.parseOr();
          this.expectPunct(')', "expected ')'");
          this.depth--;
          return inner;
        }
        break;
      default:
        break;
    }
    throw this.error(t, `expected a value, a path or '(' but found ${describe(t)}`);
  }

  private parseName(t: Token): GuardNode {
    switch (t.text) {
      case 'true':
        return { kind: 'literal', value: true };
      case 'false':
        return { kind: 'literal', value: false };
      case 'null':
        return { kind: 'literal', value: null };
      case 'policy':
        return { kind: 'path', root: 'policy', segments: this.parseSegments() };
      case 'context':
        return { kind: 'path', root: 'context', segments: this.parseSegments() };
      case 'facts':
        return { kind: 'path', root: 'context', segments: ['facts', ...this.parseSegments()] };
      default:
        throw this.error(t, `unknown name '${t.text}'; guards read $<task>, policy, context or facts`);
    }
  }

  private parseSegments(): PathSegment[] {
    const segments: PathSegment[] = [];
    for (;;) {
      const t = this.peek();
      if (t.kind !== 'punct' || (t.text !== '.' && t.text !== '[')) return segments;
      this.pos++;
      if (t.text === '.') {
        const name = this.next();
        if (name.kind !== 'ident') throw this.error(name, "expected a field name after '.'");
        segments.push(this.checkField(name, name.text));
        continue;
      }
      const key = this.next();
      if (key.kind === 'string') segments.push(this.checkField(key, key.text));
      else if (key.kind === 'number' && Number.isSafeInteger(key.value) && (key.value ?? -1) >= 0) {
        segments.push(key.value ?? 0);
      } else throw this.error(key, "expected a quoted field name or a non-negative integer index after '['");
      this.expectPunct(']', "expected ']'");
    }
  }

  private checkField(t: Token, name: string): string {
    if (FORBIDDEN_FIELDS.has(name)) throw this.error(t, `'${name}' is not a readable field`);
    return name;
  }

  private enter(t: Token): void {
    this.depth++;
    if (this.depth > MAX_GUARD_DEPTH) throw this.error(t, `nesting deeper than ${MAX_GUARD_DEPTH}`);
  }

  private expectPunct(text: string, message: string): void {
    const t = this.next();
    if (t.kind !== 'punct' || t.text !== text) throw this.error(t, `${message} but found ${describe(t)}`);
  }

  private isOp(text: string): boolean {
    const t = this.peek();
    return t.kind === 'op' && t.text === text;
  }

  private peek(): Token {
    // tokenize always ends with eof, and pos never moves past it
    return this.tokens[Math.min(this.pos, this.tokens.length - 1)] as Token;
  }

  private next(): Token {
    const t = this.peek();
    if (t.kind !== 'eof') this.pos++;
    return t;
  }

  private error(t: Token, detail: string): GuardSyntaxError {
    return new GuardSyntaxError(this.source, t.offset, detail);
  }
}

function describe(t: Token): string {
  switch (t.kind) {
    case 'eof':
      return 'the end';
    case 'string':
      return 'a string';
    case 'number':
      return `number ${t.text}`;
    case 'task':
      return `$${t.text}`;
    default:
      return `'${t.text}'`;
  }
}
