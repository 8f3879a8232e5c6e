// Parses JSON text and, when it is malformed, says where: line and column of the first bad character.
// Node 20's JSON.parse messages carry no position, so a small scanner finds it.

import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';

// The yaml parser loads on the first YAML text: most runs read none, and it is ~70 modules.
let yamlParse: typeof Yaml.parse | null = null;
function parseYaml(text: string, options: Yaml.ParseOptions & Yaml.DocumentOptions & Yaml.SchemaOptions & Yaml.ToJSOptions): unknown {
  yamlParse ??= (createRequire(import.meta.url)('yaml') as typeof Yaml).parse;
  return yamlParse(text, options);
}

export type JsonTextResult = { ok: true; value: unknown } | { ok: false; line: number; column: number; message: string };

export function parseJsonText(text: string): JsonTextResult {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return { ok: true, value: JSON.parse(body) as unknown };
  } catch {
    const { offset, message } = locateJsonError(body);
    const { line, column } = lineColumn(body, offset);
    return { ok: false, line, column, message };
  }
}

/** 1-based line and column (in code points) of a UTF-16 offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf('\n') + 1;
  const line = before.split('\n').length;
  return { line, column: Array.from(before.slice(lineStart)).length + 1 };
}

class Stop extends Error {
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** The offset and reason of the first JSON syntax error in `text` (assumes JSON.parse already failed). */
export function locateJsonError(text: string): { offset: number; message: string } {
  let i = 0;
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text.charAt(i))) i++;
  };
  const fail = (reason: string): never => {
    throw new Stop(i, i >= text.length ? 'unexpected end of JSON' : `${reason}, found ${JSON.stringify(text.charAt(i))}`);
  };
  const literal = (word: string): void => {
    for (const ch of word) {
      if (text.charAt(i) !== ch) fail(`expected ${word}`);
      i++;
    }
  };
  const string = (): void => {
    i++;
    for (;;) {
      if (i >= text.length) fail('unterminated string');
      const c = text.charCodeAt(i);
      if (c === 0x22) return void i++;
      if (c < 0x20) fail('control character in string');
      if (c === 0x5c) {
        i++;
        const e = text.charAt(i);
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail('bad \\u escape');
          i += 5;
        } else if ('"\\/bfnrt'.includes(e) && e !== '') i++;
        else fail('bad escape');
      } else i++;
    }
  };
  const number = (): void => {
    const m = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/.exec(text.slice(i));
    if (!m || m[0] === '-') fail('bad number');
    i += m?.[0].length ?? 0;
  };
  const value = (): void => {
    ws();
    const c = text.charAt(i);
    if (c === '{') {
      i++;
      ws();
      if (text.charAt(i) === '}') return void i++;
      for (;;) {
        ws();
        if (text.charAt(i) !== '"') fail('expected a quoted key');
        string();
        ws();
        if (text.charAt(i) !== ':') fail("expected ':'");
        i++;
        value();
        ws();
        if (text.charAt(i) === ',') i++;
        else if (text.charAt(i) === '}') return void i++;
        else fail("expected ',' or '}'");
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text.charAt(i) === ']') return void i++;
      for (;;) {
        value();
        ws();
        if (text.charAt(i) === ',') i++;
        else if (text.charAt(i) === ']') return void i++;
        else fail("expected ',' or ']'");
      }
    } else if (c === '"') string();
    else if (c === 't') literal('true');
    else if (c === 'f') literal('false');
    else if (c === 'n') literal('null');
    else if (c === '-' || (c >= '0' && c <= '9')) number();
    else fail('expected a value');
  };
  try {
    value();
    ws();
    if (i < text.length) fail('unexpected text after the JSON value');
  } catch (e) {
    if (e instanceof Stop) return { offset: e.offset, message: e.reason };
    // a nesting depth JSON.parse accepts but this recursive scanner cannot: report the start
    return { offset: 0, message: 'JSON too deeply nested' };
  }
  return { offset: 0, message: 'invalid JSON' };
}

/**
 * A document as JSON or, for `.yaml`/`.yml` files, YAML (the ACM texts write their examples in both).
 * YAML is read as plain data only: no custom tags, aliases limited, so a hostile file cannot expand.
 */
export function parseDocumentText(text: string, fileName: string): JsonTextResult {
  if (!/\.ya?ml$/i.test(fileName)) return parseJsonText(text);
  try {
    return { ok: true, value: parseYaml(text, { maxAliasCount: 100, prettyErrors: false, uniqueKeys: true }) };
  } catch (e) {
    const pos = (e as { linePos?: { line: number; col: number }[] }).linePos?.[0];
    return { ok: false, line: pos?.line ?? 1, column: pos?.col ?? 1, message: `not valid YAML: ${(e as Error).message.split('\n')[0] ?? ''}` };
  }
}
