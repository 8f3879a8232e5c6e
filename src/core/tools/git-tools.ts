// git_status and git_diff: read-only views of the worktree through safeGit (hooks, fsmonitor, drivers off).
import { z } from 'zod';
import { safeGit } from '../sandbox/safe-git.js';
import { defineTool, toolError } from './define-tool.js';
import { truncateMiddle } from './truncate.js';

export const gitStatus = defineTool({
  name: 'git_status',
  description: 'Show the working tree status of the repository (branch, changed, staged and untracked files).',
  input: z.strictObject({}),
  output: z.object({ changed: z.number() }),
  readOnly: true,
  run: async (_input, ctx) => {
    const r = await safeGit(ctx.root, ['status', '--porcelain=v1', '--branch', '--untracked-files=all'], ctx.signal ? { signal: ctx.signal } : {});
    if (r.exitCode !== 0) return toolError(`git status failed: ${r.stderr.trim()}`);
    const lines = r.stdout.split('\n').filter((l) => l !== '');
    const changed = lines.filter((l) => !l.startsWith('##')).length;
    return { ok: true, forModel: truncateMiddle(r.stdout || '(clean)').text, forDisplay: `git status: ${changed} changed`, data: { changed } };
  },
});

export const gitDiff = defineTool({
  name: 'git_diff',
  description: 'Show the diff of the working tree (staged and unstaged) against HEAD.',
  input: z.strictObject({}),
  output: z.object({ files: z.array(z.string()) }),
  readOnly: true,
  run: async (_input, ctx) => {
    const opts = ctx.signal ? { signal: ctx.signal } : {};
    const head = await safeGit(ctx.root, ['rev-parse', '--verify', '--quiet', 'HEAD'], opts);
    const args = head.exitCode === 0 ? ['diff', 'HEAD'] : ['diff', '--cached'];
    const r = await safeGit(ctx.root, [...args, '--no-color', '--no-renames'], opts);
    if (r.exitCode !== 0) return toolError(`git diff failed: ${r.stderr.trim()}`);
    const files = (r.stdout.match(/^diff --git /gm) ?? []).length;
    return { ok: true, forModel: truncateMiddle(r.stdout || '(no changes)').text, forDisplay: r.stdout || '(no changes)', data: { files } };
  },
});
