// The mutation list stays in step with the code: each mutation's text occurs once in its file, and the
// tests it names exist. (Running them is scripts/mutation-check.mjs, which is slow.)
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

interface Mutation {
  id: string;
  file: string;
  find: string;
  replace: string;
  tests: string[];
}
// A plain .mjs script (no types); its shape is the typedef at its top.
const { MUTATIONS } = (await import(pathToFileURL(join(root, 'scripts', 'mutations.mjs')).href)) as { MUTATIONS: Mutation[] };

describe('scripts/mutations.mjs', () => {
  it('every mutation applies to the source as it is, once, and names tests that exist', () => {
    for (const m of MUTATIONS) {
      const text = readFileSync(join(root, m.file), 'utf8');
      expect(text.split(m.find).length - 1, `${m.id}: find text in ${m.file}`).toBe(1);
      expect(m.replace, m.id).not.toBe(m.find);
      for (const t of m.tests) expect(existsSync(join(root, t)), `${m.id}: ${t}`).toBe(true);
    }
    expect(new Set(MUTATIONS.map((m) => m.id)).size).toBe(MUTATIONS.length);
  });

  it('docs/acm-conformance.md cites exactly these mutations: each row names one that exists, each one is cited', () => {
    const doc = readFileSync(join(root, 'docs', 'acm-conformance.md'), 'utf8');
    // The last cell of each table row holds the row's mutation ids, comma-separated.
    const cited = doc
      .split('\n')
      .filter((l) => l.startsWith('|') && !l.startsWith('|---'))
      .flatMap((l) => (l.split('|').at(-2) ?? '').split(','))
      .map((c) => c.trim())
      .filter((c) => /^[a-z0-9]+(-[a-z0-9]+)+$/.test(c));
    const ids = MUTATIONS.map((m) => m.id);
    expect(cited.filter((c) => !ids.includes(c))).toEqual([]);
    expect(ids.filter((id) => !cited.includes(id))).toEqual([]);
  });
});
