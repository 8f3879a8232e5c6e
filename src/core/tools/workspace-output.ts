// Workspace runners print each package's output behind a per-line prefix: pnpm's `packages/core test: `
// (after a `packages/core test$ vitest run` start line), Yarn's `[@scope/core]: `. Summary and failure
// parsers key on line starts, so the prefixes go first.

/**
 * `text` without the per-line prefixes of a pnpm recursive run or a Yarn `workspaces foreach`. Only
 * prefixes the runner announced (pnpm's start lines) or that open several lines (Yarn's) are removed.
 */
export function stripWorkspacePrefixes(text: string): string {
  const prefixes = new Set<string>();
  for (const m of text.matchAll(/^(\S+ [\w:.-]+)\$ /gm)) prefixes.add(`${m[1]!}:`);
  const yarn = new Map<string, number>();
  for (const m of text.matchAll(/^(\[[^\]\n]{1,214}\]:)(?: |$)/gm)) yarn.set(m[1]!, (yarn.get(m[1]!) ?? 0) + 1);
  for (const [p, n] of yarn) if (n >= 2) prefixes.add(p);
  if (prefixes.size === 0) return text;
  return text
    .split('\n')
    .map((line) => {
      for (const p of prefixes) {
        if (line === p) return '';
        if (line.startsWith(`${p} `)) return line.slice(p.length + 1);
      }
      return line;
    })
    .join('\n');
}
