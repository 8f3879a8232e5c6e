// list_dir: a tree of a directory (depth-limited), skipping .git, node_modules and .gitignore'd entries.
import * as nodePath from 'node:path';
import { z } from 'zod';
import { AciaError } from '../errors.js';
import { defineTool } from './define-tool.js';
import { lstatListed, resolvePath } from './fs-access.js';
import { parseGitignore, type IgnoreTest } from './gitignore.js';
import type { ToolContext } from './types.js';
import { truncateMiddle } from './truncate.js';

const MAX_ENTRIES = 2000;

export const listDir = defineTool({
  name: 'list_dir',
  description: 'List a directory of the repository as a tree (directories end with /). Skips .git, node_modules and ignored paths.',
  input: z.strictObject({
    path: z.string().min(1).default('.').describe('directory relative to the repository root'),
    depth: z.number().int().min(1).max(6).optional().describe('levels to descend (default 2)'),
  }),
  output: z.object({ path: z.string(), entries: z.number(), capped: z.boolean() }),
  readOnly: true,
  run: (input, ctx) => {
    const resolved = resolvePath(ctx, input.path);
    if (!resolved.exists) throw new AciaError('FILE_NOT_FOUND', `${input.path} does not exist`);
    if (!ctx.fs.statSync(resolved.abs).isDirectory()) throw new AciaError('INPUT_INVALID', `${input.path} is not a directory`);
    const ignored = loadIgnore(ctx);
    const lines: string[] = [];
    const state = { count: 0, capped: false };
    walk(ctx, resolved.abs, resolved.rel, input.depth ?? 2, 0, ignored, lines, state);
    const label = resolved.rel === '' ? '.' : resolved.rel;
    const body = lines.length === 0 ? '(empty)' : lines.join('\n');
    const cap = state.capped ? `\n[listing stopped at ${MAX_ENTRIES} entries]` : '';
    return Promise.resolve({
      ok: true,
      forModel: truncateMiddle(`${label}/\n${body}${cap}`).text,
      forDisplay: `listed ${label} (${state.count} entries)`,
      data: { path: label, entries: state.count, capped: state.capped },
    });
  },
});

function loadIgnore(ctx: ToolContext): IgnoreTest {
  try {
    return parseGitignore(String(ctx.fs.readFileSync(nodePath.join(ctx.root, '.gitignore'), 'utf8')));
  } catch {
    return parseGitignore('');
  }
}

function walk(
  ctx: ToolContext,
  abs: string,
  rel: string,
  depth: number,
  level: number,
  ignored: IgnoreTest,
  out: string[],
  state: { count: number; capped: boolean },
): void {
  const names = (ctx.fs.readdirSync(abs)).map(String).sort();
  for (const name of names) {
    if (state.count >= MAX_ENTRIES) {
      state.capped = true;
      return;
    }
    const childAbs = nodePath.join(abs, name);
    const childRel = rel === '' ? name : `${rel}/${name}`;
    const st = lstatListed(ctx, childAbs);
    const indent = '  '.repeat(level);
    if (st === null) {
      state.count++;
      out.push(`${indent}${name}  [name is not valid UTF-8: tools cannot open it]`);
      continue;
    }
    const isDir = st.isDirectory();
    if (ignored(childRel, isDir)) continue;
    state.count++;
    if (st.isSymbolicLink()) out.push(`${indent}${name} -> ${String(ctx.fs.readlinkSync(childAbs))}`);
    else out.push(`${indent}${name}${isDir ? '/' : ''}`);
    if (isDir && level + 1 < depth) walk(ctx, childAbs, childRel, depth, level + 1, ignored, out, state);
  }
}
