// The repository's root .gitignore for list_dir and the search fallback, matched with the `ignore` package
// (git's own rules: negation, anchoring, `**`, directory-only patterns, a parent directory's exclusion).

import ignore from 'ignore';

export type IgnoreTest = (relPath: string, isDir: boolean) => boolean;

const ALWAYS = new Set(['.git', 'node_modules']);

export function parseGitignore(text: string): IgnoreTest {
  const ig = ignore().add(text);
  return (relPath, isDir) => {
    const parts = relPath.split('/');
    if (parts.some((p) => ALWAYS.has(p))) return true;
    // `ignore` wants a relative path without a leading ./ and marks directories by a trailing slash.
    const rel = relPath.replace(/^\.\/+/, '');
    if (rel === '' || rel === '.' || rel.startsWith('../') || rel.startsWith('/')) return false;
    return ig.ignores(isDir ? `${rel}/` : rel);
  };
}
