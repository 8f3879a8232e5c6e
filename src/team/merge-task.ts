// Merge conflicts between task branches become dev.merge tasks: a Dev agent resolves the conflict in
// its own worktree with both sides, the hunks and both tasks' instructions in view; ACIA checks that no
// conflict marker is left, commits the merge and merges it into the run branch like any dev task.
import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TaskSpec } from '../core/acm/contracts.js';
import type { RunContext } from './run-context.js';

const MAX_HUNKS_CHARS = 8000;
const CONTEXT_LINES = 3;
const MARKER = /^(<{7}|>{7})(\s|$)|^={7}$/m;

/** The conflict hunks of one file's text (with a few lines of context), or '' when it has none. */
export function conflictHunks(path: string, text: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.startsWith('<<<<<<<')) continue;
    let end = i;
    while (end < lines.length && !lines[end]!.startsWith('>>>>>>>')) end++;
    const from = Math.max(0, i - CONTEXT_LINES);
    const to = Math.min(lines.length - 1, end + CONTEXT_LINES);
    out.push(`--- ${path} lines ${from + 1}-${to + 1}`, ...lines.slice(from, to + 1));
    i = end;
  }
  return out.join('\n');
}

/**
 * The hunks of the conflicted files under `root`, capped. Only regular files are read: a conflicted
 * path an agent made a symlink must not pull a host file into a model prompt.
 */
export async function readConflictHunks(root: string, files: readonly string[]): Promise<string> {
  const parts: string[] = [];
  for (const f of files) {
    try {
      const st = await lstat(join(root, f));
      if (!st.isFile()) {
        parts.push(`--- ${f}: not a regular file (${st.isSymbolicLink() ? 'a symlink' : 'a directory or special file'}); resolve it by hand`);
        continue;
      }
      const hunks = conflictHunks(f, await readFile(join(root, f), 'utf8'));
      parts.push(hunks === '' ? `--- ${f}: conflicted without text markers (deleted or binary on one side)` : hunks);
    } catch {
      parts.push(`--- ${f}: deleted on one side`);
    }
  }
  const text = parts.join('\n');
  return text.length > MAX_HUNKS_CHARS ? `${text.slice(0, MAX_HUNKS_CHARS)}\n... (${text.length - MAX_HUNKS_CHARS} more characters; read the files)` : text;
}

/** Files under `root` (of `files`) that still hold a conflict marker line. */
export async function filesWithMarkers(root: string, files: readonly string[]): Promise<string[]> {
  const left: string[] = [];
  for (const f of files) {
    try {
      const st = await lstat(join(root, f));
      if (st.isFile() && MARKER.test(await readFile(join(root, f), 'utf8'))) left.push(f);
    } catch {
      // Deleted: a resolution may remove a file.
    }
  }
  return left;
}

export function mergeTaskId(taskId: string): string {
  return `${taskId}-merge`;
}

/**
 * The dev.merge task for `taskId`, whose branch conflicted with the run branch in `files`: it names
 * both sides, carries the hunks and the instructions of the task and of the merged tasks it met.
 */
export function mergeTaskSpec(ctx: RunContext, taskId: string, files: string[], hunks: string): TaskSpec {
  const instructionsOf = (id: string) => {
    const i = (ctx.state.tasks.get(id)?.spec.input as { instructions?: unknown } | undefined)?.instructions;
    return typeof i === 'string' ? i : '(no instructions)';
  };
  const others = mergedTasksTouching(ctx, files).filter((id) => id !== taskId);
  const otherText = others.length > 0 ? others.map((id) => `task ${id}: ${instructionsOf(id)}`).join('\n') : '(tasks already merged into the run branch)';
  return {
    id: mergeTaskId(taskId),
    capability: 'dev.merge',
    title: `resolve the merge conflict of ${taskId}`,
    input: {
      instructions:
        `Task ${taskId}'s branch conflicts with work already merged into the run branch, in ${files.join(', ')}. ` +
        'This worktree is in the middle of that merge: the conflicted files hold conflict markers (<<<<<<< run branch, ======= , >>>>>>> the task). ' +
        'Resolve every conflict so that both tasks\' changes are kept, remove every marker, and check that the tests pass. Do not commit or abort the merge; ACIA commits it.\n' +
        `Incoming side, task ${taskId}: ${instructionsOf(taskId)}\n` +
        `Run branch side:\n${otherText}`,
      task: taskId,
      files,
      conflicts: hunks,
    },
    verification: [],
  };
}

/** Merged tasks whose recorded merge changed any of `files`: the other side of a conflict. */
function mergedTasksTouching(ctx: RunContext, files: readonly string[]): string[] {
  const ids: string[] = [];
  for (const e of ctx.rec.ledger.entries()) {
    if (e.type !== 'MERGE') continue;
    const d = e.data;
    if (!d.conflict && d.files.some((f) => files.includes(f)) && !ids.includes(d.taskId)) ids.push(d.taskId);
  }
  return ids;
}
