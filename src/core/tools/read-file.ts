// read_file: a window of a text file, with line numbers, through the path guard.
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { readTextFile } from './fs-access.js';
import { truncateMiddle } from './truncate.js';

const DEFAULT_LIMIT = 2000;

export const readFile = defineTool({
  name: 'read_file',
  description:
    'Read a text file in the repository. Returns numbered lines. Use offset (1-based line) and limit (lines) for large files.',
  input: z.strictObject({
    path: z.string().min(1).describe('path relative to the repository root'),
    offset: z.number().int().min(1).optional().describe('first line to return, 1-based'),
    limit: z.number().int().min(1).max(10_000).optional().describe(`lines to return (default ${DEFAULT_LIMIT})`),
  }),
  output: z.object({ path: z.string(), totalLines: z.number(), from: z.number(), to: z.number() }),
  readOnly: true,
  run: (input, ctx) => {
    const { resolved, text } = readTextFile(ctx, input.path);
    const lines = text.split('\n');
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    const start = (input.offset ?? 1) - 1;
    const limit = input.limit ?? DEFAULT_LIMIT;
    const window = lines.slice(start, start + limit);
    const width = String(start + window.length).length;
    const body = window.map((l, i) => `${String(start + i + 1).padStart(width, ' ')}\t${l}`).join('\n');
    const more = start + window.length < lines.length ? `\n[${lines.length - start - window.length} more lines; use offset=${start + window.length + 1}]` : '';
    const header = `${resolved.rel} (${lines.length} lines)`;
    const shown = window.length === 0 ? `${header}\n[no lines at offset ${start + 1}]` : `${header}\n${body}${more}`;
    return Promise.resolve({
      ok: true,
      forModel: truncateMiddle(shown).text,
      forDisplay: `read ${resolved.rel} lines ${start + 1}-${start + window.length} of ${lines.length}`,
      data: { path: resolved.rel, totalLines: lines.length, from: start + 1, to: start + window.length },
    });
  },
});
