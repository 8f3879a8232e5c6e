// A simple .gitignore reader for list_dir and the search fallback: root-level patterns, no negation.

export type IgnoreTest = (relPath: string, isDir: boolean) => boolean;

const ALWAYS = new Set(['.git', 'node_modules']);

export function parseGitignore(text: string): IgnoreTest {
  const rules: { re: RegExp; dirOnly: boolean; anchored: boolean }[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    const dirOnly = line.endsWith('/');
    const body = line.replace(/\/+$/, '');
    const anchored = body.includes('/');
    const pattern = body.replace(/^\//, '');
    rules.push({ re: globToRegExp(pattern), dirOnly, anchored });
  }
  return (relPath, isDir) => {
    const parts = relPath.split('/');
    if (parts.some((p) => ALWAYS.has(p))) return true;
    return rules.some((r) => {
      if (r.dirOnly && !isDir) return false;
      return r.anchored ? r.re.test(relPath) : r.re.test(parts[parts.length - 1] ?? '');
    });
  };
}

function globToRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i] as string;
    if (ch === '*') {
      if (glob[i + 1] === '*') {
        out += '.*';
        i++;
      } else out += '[^/]*';
    } else if (ch === '?') out += '[^/]';
    else out += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}
