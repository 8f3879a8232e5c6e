// Prompt templates live as markdown next to the code; `{{name}}` placeholders are filled from a record.
// Every system prompt goes through `renderPrompt`, which refuses a template whose placeholders and
// values differ: a hole left in a prompt reaches the model silently, so it must fail before the call.
import { readFileSync } from 'node:fs';
import { AciaError } from '../core/errors.js';
import { packagePath } from '../core/package-root.js';

const cache = new Map<string, string>();
const PLACEHOLDER = /\{\{\s*([a-zA-Z0-9_]+)\s*\}\}/g;

/** A prompt file as shipped: a built-in role's file has YAML frontmatter (its settings) above the template. */
export function loadPromptFile(file: string): string {
  let text = cache.get(file);
  if (text === undefined) {
    text = readFileSync(packagePath('src', 'agents', 'prompts', file), 'utf8');
    cache.set(file, text);
  }
  return text;
}

/** The template of a prompt file: its frontmatter, if any, is the role's settings, not part of the prompt. */
export function loadTemplate(file: string): string {
  const text = loadPromptFile(file);
  const m = /^---\r?\n[\s\S]*?\r?\n---\r?\n/.exec(text);
  return m ? text.slice(m[0].length) : text;
}

/** The distinct placeholder names of a template, in order of first use. */
export function templatePlaceholders(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1] ?? ''))];
}

/**
 * Fills `{{key}}`. A placeholder without a value, a value without a placeholder (the template lost it)
 * or any `{{` left after filling is a programming error, so it throws INTERNAL rather than leaving a hole.
 */
export function renderTemplate(template: string, values: Readonly<Record<string, string>>, name = 'prompt template'): string {
  const wanted = templatePlaceholders(template);
  const missing = wanted.filter((k) => values[k] === undefined);
  const unused = Object.keys(values).filter((k) => !wanted.includes(k));
  if (missing.length > 0 || unused.length > 0) {
    const parts = [
      ...(missing.length > 0 ? [`no value for ${missing.map((k) => `{{${k}}}`).join(', ')}`] : []),
      ...(unused.length > 0 ? [`no placeholder for ${unused.join(', ')}`] : []),
    ];
    throw new AciaError('INTERNAL', `${name}: ${parts.join('; ')}`);
  }
  const out = template.replace(PLACEHOLDER, (_m, key: string) => values[key] ?? '');
  // A malformed placeholder (`{{ two words }}`, `{{x}` ...) is not matched above; it must not ship either.
  if (/\{\{|\}\}/.test(template.replace(PLACEHOLDER, ''))) throw new AciaError('INTERNAL', `${name}: a malformed {{placeholder}} is left`);
  return out;
}

/** What `renderPrompt` needs of an agent definition: its template file and the variables it declares. */
export interface PromptSource<V extends string> {
  readonly instructions: string;
  readonly promptVars: readonly V[];
}

/** The one way a system prompt is made: the agent's template, filled with exactly the variables it declares. */
export function renderPrompt<V extends string>(def: PromptSource<V>, values: Readonly<Record<V, string>>): string {
  const template = loadTemplate(def.instructions);
  const declared = [...def.promptVars].sort();
  const used = templatePlaceholders(template).sort();
  if (declared.join(',') !== used.join(',')) {
    throw new AciaError('INTERNAL', `prompt ${def.instructions}: declares {${declared.join(', ')}} but the template uses {${used.join(', ')}}`);
  }
  return renderTemplate(template, values, `prompt ${def.instructions}`);
}
