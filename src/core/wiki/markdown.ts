// Deterministic markdown helpers: hand-rendered YAML front matter and escaping of ledger text, which
// may come from a model and is treated as hostile (no raw HTML, no table or front matter breakage).

export type FrontValue = string | number | boolean | null;

/** YAML front matter with keys in the given order; strings are double-quoted JSON strings (valid YAML). */
export function frontMatter(fields: ReadonlyArray<readonly [string, FrontValue]>): string {
  const lines = fields.map(([k, v]) => `${k}: ${typeof v === 'string' ? JSON.stringify(v) : String(v)}`);
  return `---\n${lines.join('\n')}\n---\n`;
}

/**
 * One line of untrusted text safe inside a table cell or a list item, and inert when rendered: no HTML, no
 * link or image syntax (brackets are escaped, so `![x](https://tracker)` never fetches anything), and web
 * addresses and e-mail addresses a renderer would autolink are shown as code, never as links.
 */
export function inline(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const cut = flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
  return inertLinks(cut, escapeInline);
}

function escapeInline(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/([[\]])/g, '\\$1');
}

/** What GitHub-flavoured markdown would turn into a link on its own: URLs with a scheme, `www.` hosts, e-mail addresses. */
const AUTOLINK = /(?:\b[a-z][a-z0-9+.-]{1,31}:\/\/|\bwww\.)[^\s<>]*[^\s<>.,;:!?)\]'"]|[\w.+-]+@[\w-]+(?:\.[\w-]+)+/gi;

/** `text` with every autolinkable token wrapped in a code span and the rest passed through `escape`. */
export function inertLinks(text: string, escape: (s: string) => string = (s) => s): string {
  let out = '';
  let last = 0;
  for (const m of text.matchAll(AUTOLINK)) {
    out += escape(text.slice(last, m.index)) + codeSpan(m[0]);
    last = m.index + m[0].length;
  }
  return out + escape(text.slice(last));
}

/** A code span that holds `s` as it is: the fence outgrows any backticks inside; a pipe is escaped for tables. */
function codeSpan(s: string): string {
  const longest = Math.max(0, ...Array.from(s.matchAll(/`+/g), (m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const pad = s.startsWith('`') || s.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${s.replace(/\|/g, '\\|')}${pad}${fence}`;
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
