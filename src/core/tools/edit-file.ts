// edit_file: replace one exact, unique occurrence of a text and show the change as a unified diff.
import { z } from 'zod';
import { AciaError } from '../errors.js';
import { defineTool } from './define-tool.js';
import { readTextFile, writeTextFile } from './fs-access.js';
import { truncateMiddle } from './truncate.js';
import { unifiedDiff } from './unified-diff.js';

export const editFile = defineTool({
  name: 'edit_file',
  description:
    'Replace exactly one occurrence of `old` with `new` in a file. `old` must match the file exactly (whitespace included) and be unique; add surrounding lines to make it unique. Returns a diff.',
  input: z.strictObject({
    path: z.string().min(1).describe('path relative to the repository root'),
    old: z.string().min(1).describe('the exact text to replace; must occur exactly once'),
    new: z.string().describe('the replacement text'),
  }),
  output: z.object({ path: z.string(), line: z.number() }),
  readOnly: false,
  run: (input, ctx) => {
    const { resolved, text } = readTextFile(ctx, input.path);
    const positions = occurrences(text, input.old);
    if (positions.length === 0) {
      const hint = text.replace(/\s+/g, ' ').includes(input.old.replace(/\s+/g, ' '))
        ? ' (it matches if whitespace is ignored: copy the exact indentation and line breaks from read_file)'
        : '';
      throw new AciaError('INPUT_INVALID', `old text not found in ${resolved.rel}${hint}`);
    }
    if (positions.length > 1) {
      const lines = positions.map((p) => lineOf(text, p)).join(', ');
      throw new AciaError('INPUT_INVALID', `old text occurs ${positions.length} times in ${resolved.rel} (lines ${lines}); include more surrounding text so it matches once`);
    }
    const at = positions[0] as number;
    const next = text.slice(0, at) + input.new + text.slice(at + input.old.length);
    writeTextFile(ctx, input.path, next);
    const diff = unifiedDiff(resolved.rel, text, next);
    return Promise.resolve({
      ok: true,
      forModel: truncateMiddle(diff).text,
      forDisplay: diff,
      data: { path: resolved.rel, line: lineOf(text, at) },
    });
  },
});

function occurrences(text: string, needle: string): number[] {
  const out: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + 1)) out.push(i);
  return out;
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}
