// A role or skill file's frontmatter: the `---` block at the top, read as YAML. The yaml parser is about
// 70 modules and ~30 ms of start-up, and every run reads the built-in PM, Dev and QA role files before
// its first model request: frontmatter written in the plain subset below (theirs, and most people's) is
// read without it. Anything outside that subset goes to the yaml parser, loaded then, so what a file
// means never depends on which path read it (tests/agents/frontmatter.test.ts holds both to the same
// answers).
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import { AciaError } from '../../core/errors.js';

let yamlParse: typeof Yaml.parse | null = null;
function parseYaml(text: string): unknown {
  yamlParse ??= (createRequire(import.meta.url)('yaml') as typeof Yaml).parse;
  return yamlParse(text);
}

/** Frontmatter between `---` lines at the top, parsed as YAML; the rest is the body. */
export function splitFrontmatter(text: string, where: string): { front: unknown; body: string } {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (!m) throw new AciaError('CONFIG_INVALID', `${where} has no frontmatter: it must start with a --- block holding at least name and description`);
  const block = m[1] ?? '';
  let front: unknown = plainFrontmatter(block);
  if (front === null) {
    try {
      front = parseYaml(block);
    } catch (e) {
      throw new AciaError('CONFIG_INVALID', `${where}: the frontmatter is not valid YAML: ${(e as Error).message.split('\n')[0] ?? ''}`);
    }
  }
  return { front: front ?? {}, body: text.slice(m[0].length) };
}

const KEY = /^([A-Za-z_][A-Za-z0-9_-]*): +(.*)$/;
/** A plain word: YAML (1.2 core schema) reads it as this string in block and flow context alike. */
const WORD = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
/** Words the core schema reads as booleans or null, not strings. */
const NOT_STRINGS = new Set(['null', 'Null', 'NULL', 'true', 'True', 'TRUE', 'false', 'False', 'FALSE']);

/**
 * The frontmatter as an object when every line is `key: value` with a value YAML reads the obvious way:
 * a decimal integer without leading zeros, a flow list of plain words, or one line of plain text that
 * starts with a letter and holds no `: `, ` #` or control character. Null for anything else (a quoted or
 * empty value, a comment, a blank or indented line, nesting, a repeated key, a key YAML reads as a
 * boolean or null...): the yaml parser reads those.
 */
export function plainFrontmatter(block: string): Record<string, unknown> | null {
  const out: Record<string, unknown> = {};
  for (const line of block.split(/\r?\n/)) {
    const m = KEY.exec(line);
    if (!m) return null;
    const key = m[1]!;
    const raw = m[2]!.replace(/[ ]+$/, '');
    if (Object.hasOwn(out, key) || key === '__proto__' || NOT_STRINGS.has(key)) return null;
    const value = plainValue(raw);
    if (value === undefined) return null;
    out[key] = value;
  }
  return out;
}

function plainValue(raw: string): unknown {
  if (/^[1-9][0-9]{0,14}$/.test(raw)) return Number(raw);
  if (raw.startsWith('[') && raw.endsWith(']')) {
    const inner = raw.slice(1, -1).trim();
    if (inner === '') return [];
    const items = inner.split(',').map((s) => s.trim());
    return items.every((s) => WORD.test(s) && !NOT_STRINGS.has(s)) ? items : undefined;
  }
  if (!/^[A-Za-z]/.test(raw) || NOT_STRINGS.has(raw)) return undefined;
  if (raw.includes(': ') || raw.includes(' #') || raw.endsWith(':')) return undefined;
  // (Quotes, brackets and the like are plain text here: only a first character gives them a meaning.)
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return undefined;
  }
  return raw;
}
