// The guard language's tokenizer (ACM §13): turns a guard string into tokens with their source offsets.
import { AciaError } from '../errors.js';

export const MAX_GUARD_LENGTH = 2000;

/** Field names that could reach the prototype chain; rejected when written, and unreadable at evaluation. */
export const FORBIDDEN_FIELDS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

export type TokenKind =
  | 'task' // $t3
  | 'ident' // policy, context, facts, true, false, null, field names after '.'
  | 'string'
  | 'number'
  | 'op' // || && ! == != < <= > >=
  | 'punct' // ( ) [ ] .
  | 'eof';

export interface Token {
  kind: TokenKind;
  /** Source text for ops, punctuation and identifiers; the decoded value for strings; the task id for tasks. */
  text: string;
  value?: number;
  /** UTF-16 offset into the source; turned into a 1-based code-point column only when reporting. */
  offset: number;
}

/** A guard that cannot be parsed; `column` is 1-based and counts Unicode code points. */
export class GuardSyntaxError extends AciaError {
  readonly column: number;
  readonly detail: string;

  constructor(source: string, offset: number, detail: string) {
    const column = columnAt(source, offset);
    super('PLAN_INVALID', `guard column ${column}: ${detail}`);
    this.name = 'GuardSyntaxError';
    this.column = column;
    this.detail = detail;
  }
}

export function columnAt(source: string, offset: number): number {
  return Array.from(source.slice(0, offset)).length + 1;
}

const IDENT_START = /[A-Za-z_]/;
const IDENT_PART = /[A-Za-z0-9_]/;
const TASK_PART = /[A-Za-z0-9_-]/;
const DIGIT = /[0-9]/;
const NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/;
const TWO_CHAR_OPS = new Set(['||', '&&', '==', '!=', '<=', '>=']);
const ESCAPES: Record<string, string> = { '\\': '\\', "'": "'", '"': '"', n: '\n', t: '\t', r: '\r', '/': '/', b: '\b', f: '\f' };

export function tokenize(source: string): Token[] {
  if (source.length > MAX_GUARD_LENGTH) {
    throw new GuardSyntaxError(source, MAX_GUARD_LENGTH, `guard is longer than ${MAX_GUARD_LENGTH} characters`);
  }
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source.charAt(i);
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    const two = source.slice(i, i + 2);
    if (TWO_CHAR_OPS.has(two)) {
      tokens.push({ kind: 'op', text: two, offset: i });
      i += 2;
    } else if (c === '!' || c === '<' || c === '>') {
      tokens.push({ kind: 'op', text: c, offset: i });
      i++;
    } else if (c === '=' || c === '&' || c === '|') {
      throw new GuardSyntaxError(source, i, `unexpected '${c}'; did you mean '${c}${c}'?`);
    } else if ('()[].'.includes(c)) {
      tokens.push({ kind: 'punct', text: c, offset: i });
      i++;
    } else if (c === '$') {
      let j = i + 1;
      if (!IDENT_START.test(source.charAt(j))) throw new GuardSyntaxError(source, i, "expected a task id after '$'");
      while (j < source.length && TASK_PART.test(source.charAt(j))) j++;
      tokens.push({ kind: 'task', text: source.slice(i + 1, j), offset: i });
      i = j;
    } else if (IDENT_START.test(c)) {
      let j = i + 1;
      while (j < source.length && IDENT_PART.test(source.charAt(j))) j++;
      tokens.push({ kind: 'ident', text: source.slice(i, j), offset: i });
      i = j;
    } else if (DIGIT.test(c) || (c === '-' && DIGIT.test(source.charAt(i + 1)))) {
      const m = NUMBER.exec(source.slice(i));
      const text = m?.[0] ?? c;
      const value = Number(text);
      if (!Number.isFinite(value)) throw new GuardSyntaxError(source, i, `number ${text} is out of range`);
      if (IDENT_PART.test(source.charAt(i + text.length)) || source.charAt(i + text.length) === '.') {
        throw new GuardSyntaxError(source, i + text.length, 'malformed number');
      }
      tokens.push({ kind: 'number', text, value, offset: i });
      i += text.length;
    } else if (c === "'" || c === '"') {
      const { value, end } = readString(source, i, c);
      tokens.push({ kind: 'string', text: value, offset: i });
      i = end;
    } else {
      const shown = String.fromCodePoint(source.codePointAt(i) ?? 0);
      throw new GuardSyntaxError(source, i, `unexpected character '${shown}'`);
    }
  }
  tokens.push({ kind: 'eof', text: '', offset: source.length });
  return tokens;
}

function readString(source: string, start: number, quote: string): { value: string; end: number } {
  let out = '';
  let i = start + 1;
  while (i < source.length) {
    const c = source.charAt(i);
    if (c === quote) return { value: out, end: i + 1 };
    if (c === '\\') {
      const e = source.charAt(i + 1);
      if (e === 'u') {
        const hex = source.slice(i + 2, i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new GuardSyntaxError(source, i, 'expected four hex digits after \\u');
        out += String.fromCharCode(parseInt(hex, 16));
        i += 6;
        continue;
      }
      const mapped = ESCAPES[e];
      if (mapped === undefined) {
        throw new GuardSyntaxError(source, i, e === '' ? 'unterminated string' : `unknown escape '\\${e}'`);
      }
      out += mapped;
      i += 2;
      continue;
    }
    out += c;
    i++;
  }
  throw new GuardSyntaxError(source, start, 'unterminated string');
}
