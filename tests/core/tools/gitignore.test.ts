import { describe, expect, it } from 'vitest';
import { parseGitignore } from '../../../src/core/tools/gitignore.js';

describe('parseGitignore', () => {
  it("follows git's rules: negation, anchoring, **, directory-only, ignored parents", () => {
    const ig = parseGitignore(['# comment', '*.log', '!keep.log', '/build', 'tmp/', 'docs/**/draft.md', ''].join('\n'));
    expect(ig('a.log', false)).toBe(true);
    expect(ig('sub/b.log', false)).toBe(true);
    expect(ig('keep.log', false)).toBe(false); // negated
    expect(ig('build', true)).toBe(true);
    expect(ig('src/build', true)).toBe(false); // anchored to the root
    expect(ig('tmp', true)).toBe(true);
    expect(ig('tmp', false)).toBe(false); // directory-only pattern, a file of that name
    expect(ig('tmp/x/y.txt', false)).toBe(true); // inside an ignored directory
    expect(ig('docs/a/b/draft.md', false)).toBe(true);
    expect(ig('src/index.ts', false)).toBe(false);
  });

  it('always skips .git and node_modules, and never throws on odd paths', () => {
    const ig = parseGitignore('');
    expect(ig('.git', true)).toBe(true);
    expect(ig('pkg/node_modules/x.js', false)).toBe(true);
    expect(ig('', true)).toBe(false);
    expect(ig('./src', true)).toBe(false);
    expect(ig('../outside', false)).toBe(false);
  });
});
