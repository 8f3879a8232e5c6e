// write_file: create or replace a file inside the worktree (parents created), through the path guard.
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { MAX_WRITE_BYTES, writeTextFile } from './fs-access.js';

export const writeFile = defineTool({
  name: 'write_file',
  description: `Create or overwrite a text file in the repository (parent directories are created). Max ${MAX_WRITE_BYTES} bytes. Prefer edit_file for changes to existing files.`,
  input: z.strictObject({
    path: z.string().min(1).describe('path relative to the repository root'),
    content: z.string().describe('the full new content of the file'),
  }),
  output: z.object({ path: z.string(), bytes: z.number(), created: z.boolean() }),
  readOnly: false,
  run: (input, ctx) => {
    const resolved = writeTextFile(ctx, input.path, input.content);
    const existed = resolved.exists;
    const bytes = Buffer.byteLength(input.content, 'utf8');
    const verb = existed ? 'overwrote' : 'created';
    return Promise.resolve({
      ok: true,
      forModel: `${verb} ${resolved.rel} (${bytes} bytes)`,
      forDisplay: `${verb} ${resolved.rel} (${bytes} bytes)`,
      data: { path: resolved.rel, bytes, created: !existed },
    });
  },
});
