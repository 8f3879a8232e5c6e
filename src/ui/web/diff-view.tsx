// A checkpoint's diff, parsed by diff2html's parser (git's headers: renames, modes, binary files) and
// drawn here as text cells: diff2html's own HTML output is not used, so nothing in a diff becomes markup.
import { parse } from 'diff2html/lib-esm/diff-parser';
import { shown } from './text.js';

const MAX_LINES = 3000;

export function DiffView({ diff }: { diff: string }) {
  const files = parse(diff);
  if (files.length === 0) return <p class="empty">No changes.</p>;
  let budget = MAX_LINES;
  return (
    <div class="diff" tabIndex={0} role="region" aria-label="diff">
      {files.map((f, i) => {
        const name = f.isRename || f.isCopy ? `${f.oldName} → ${f.newName}` : f.isDeleted ? f.oldName : f.newName;
        const lines = f.blocks.flatMap((b) => [{ kind: 'hunk' as const, text: b.header, old: '', now: '' }, ...b.lines.map((l) => ({ kind: l.type, text: l.content, old: l.oldNumber === undefined ? '' : String(l.oldNumber), now: l.newNumber === undefined ? '' : String(l.newNumber) }))]);
        const cut = lines.length > budget;
        const visible = lines.slice(0, Math.max(0, budget));
        budget -= visible.length;
        return (
          <section class="diff-file" key={i} aria-label={`diff of ${shown(name)}`}>
            <h4 class="mono">
              {shown(name)} <span class="adds">+{f.addedLines}</span> <span class="dels">−{f.deletedLines}</span>
              {f.isNew ? ' (new)' : f.isDeleted ? ' (deleted)' : ''}
              {f.isBinary ? ' (binary)' : ''}
            </h4>
            <table class="diff-lines">
              <tbody>
                {visible.map((l, j) => (
                  <tr key={j} class={`dl-${l.kind}`}>
                    <td class="ln">{l.old}</td>
                    <td class="ln">{l.now}</td>
                    <td class="code">{shown(l.text)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {cut ? <p class="empty">… cut here: {lines.length - visible.length} more lines (see git diff)</p> : null}
          </section>
        );
      })}
    </div>
  );
}
