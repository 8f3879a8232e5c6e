// A unified diff of one contiguous change (what edit_file makes), with three lines of context.

export function unifiedDiff(path: string, before: string, after: string, context = 3): string {
  const a = before.split('\n');
  const b = after.split('\n');
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (suffix < a.length - prefix && suffix < b.length - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix++;
  if (prefix === a.length && prefix === b.length) return `--- a/${path}\n+++ b/${path}\n(no change)`;
  const start = Math.max(0, prefix - context);
  const aEnd = a.length - suffix;
  const bEnd = b.length - suffix;
  const tailEnd = Math.min(a.length, aEnd + context);
  const lines: string[] = [];
  for (let i = start; i < prefix; i++) lines.push(` ${a[i] ?? ''}`);
  for (let i = prefix; i < aEnd; i++) lines.push(`-${a[i] ?? ''}`);
  for (let i = prefix; i < bEnd; i++) lines.push(`+${b[i] ?? ''}`);
  for (let i = aEnd; i < tailEnd; i++) lines.push(` ${a[i] ?? ''}`);
  const aCount = prefix - start + (aEnd - prefix) + (tailEnd - aEnd);
  const bCount = prefix - start + (bEnd - prefix) + (tailEnd - aEnd);
  const header = `@@ -${start + 1},${aCount} +${start + 1},${bCount} @@`;
  return [`--- a/${path}`, `+++ b/${path}`, header, ...lines].join('\n');
}
