// Prompt templates live as markdown next to the code; `{{name}}` placeholders are filled from a record.
import { readFileSync } from 'node:fs';

const cache = new Map<string, string>();

export function loadTemplate(file: string): string {
  let text = cache.get(file);
  if (text === undefined) {
    text = readFileSync(new URL(`./prompts/${file}`, import.meta.url), 'utf8');
    cache.set(file, text);
  }
  return text;
}

/** Fills `{{key}}`; an unknown key is a programming error, so it throws rather than leaving a hole. */
export function renderTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{\s*([a-zA-Z0-9_]+)\s*\}\}/g, (_m, key: string) => {
    const v = values[key];
    if (v === undefined) throw new Error(`prompt template: no value for {{${key}}}`);
    return v;
  });
}
