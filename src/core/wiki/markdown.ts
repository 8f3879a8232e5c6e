// Deterministic markdown helpers: hand-rendered YAML front matter and escaping of ledger text, which
// may come from a model and is treated as hostile (no raw HTML, no table or front matter breakage).

export type FrontValue = string | number | boolean | null;

/** YAML front matter with keys in the given order; strings are double-quoted JSON strings (valid YAML). */
export function frontMatter(fields: ReadonlyArray<readonly [string, FrontValue]>): string {
  const lines = fields.map(([k, v]) => `${k}: ${typeof v === 'string' ? JSON.stringify(v) : String(v)}`);
  return `---\n${lines.join('\n')}\n---\n`;
}

/** One line of text safe inside a table cell or a list item. */
export function inline(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim().replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** A block of untrusted text as an indented-safe fenced block (the fence outgrows any backticks inside). */
export function fenced(text: string, lang = 'text'): string {
  const longest = Math.max(2, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${lang}\n${text.replace(/\n$/, '')}\n${fence}\n`;
}

export function money(usd: number | null): string {
  return usd === null ? 'unknown' : `$${usd.toFixed(4)}`;
}
