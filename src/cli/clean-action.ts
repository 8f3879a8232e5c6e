// The work of `acia clean`: which runs may go, and removing their branches and worktrees with the
// hardened git runner.
import { systemClock } from '../core/acm/ids.js';
import { hasRunWorktrees, runDirOf } from '../core/contain/acia-state.js';
import { guardAciaState } from '../core/contain/clone-guard.js';
import { readAnchor } from '../core/ledger/anchor.js';
import { AciaError } from '../core/errors.js';
import { Git } from '../team/git.js';
import { listRunStatuses, type RunStatus } from '../team/run-status.js';
import { removeRunWorktrees } from '../team/workspace.js';
import type { CleanFlags } from './commands/clean.js';
import { EXIT } from '../app/exit-codes.js';
import { repoOf } from './runs-action.js';

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `30m`, `12h`, `7d`, `2w` in milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+)([mhdw])$/.exec(text.trim());
  if (!m) throw new AciaError('USAGE', `--older-than expects a duration such as 30m, 12h, 7d or 2w, got "${text}"`);
  return Number(m[1]) * UNITS[m[2]!]!;
}

/**
 * Why a run must be kept, or null when it may be cleaned. A run that can still go on (waiting for an answer,
 * stopped by its budget, interrupted, failed on an error) keeps its branches unless `all`: they hold its
 * work, and `acia resume` needs them. A run going on right now is always kept.
 */
export function keepReason(run: RunStatus, now: number, olderThanMs: number | null, all = false): string | null {
  if (run.live) return 'running now';
  if (!all) {
    if (run.awaitingHuman) return 'waiting for a human answer (`acia resume` it, or clean it with --all)';
    if (run.reason === null) return 'may still be running, or was interrupted: `acia resume` it (or clean it with --all)';
    if (run.finished === null) return `resumable (it stopped: ${run.reason}): \`acia resume ${run.runId}\` (or clean it with --all)`;
  }
  if (olderThanMs !== null && now - Date.parse(run.lastAt) < olderThanMs) return 'newer than --older-than';
  return null;
}

export async function cleanCommand(flags: CleanFlags): Promise<number> {
  const olderThan = flags.olderThan === undefined ? null : parseDuration(flags.olderThan);
  const repo = await repoOf(flags.repo);
  // A clone that tracks or links ACIA's run state is refused before anything is listed or removed: a
  // `.acia/worktrees` link would carry the removal out of the repository.
  await guardAciaState(repo);
  const git = new Git(systemClock);
  const now = Date.now();
  const current = await git.currentBranch(repo);
  let removed = 0;
  let kept = 0;
  for (const run of await listRunStatuses(repo)) {
    // Only runs ACIA recorded for this user are cleaned; one that came with the clone is not theirs to remove.
    const why = readAnchor(process.env, runDirOf(repo, run.runId), run.runId) === null ? 'not recorded by ACIA for you (no anchor in your state directory)' : keepReason(run, now, olderThan, flags.all ?? false);
    if (why !== null) {
      kept++;
      process.stdout.write(`keep    ${run.runId}: ${why}\n`);
      continue;
    }
    const branches = await runBranches(git, repo, run.runId);
    const keepBranch = current !== null && branches.includes(current) ? current : null;
    const toDelete = branches.filter((b) => b !== keepBranch);
    const what = `${toDelete.length} branch(es)${hasRunWorktrees(repo, run.runId) ? ' and its worktrees' : ''}`;
    if (flags.dryRun) {
      process.stdout.write(`would remove ${run.runId} (${run.reason}): ${what}\n`);
      continue;
    }
    await removeRunWorktrees(git, repo, run.runId);
    if (toDelete.length > 0) await git.run(repo, ['branch', '-D', '--', ...toDelete]);
    removed++;
    process.stdout.write(`removed ${run.runId} (${run.reason}): ${what}${keepBranch ? ` (kept ${keepBranch}: it is checked out)` : ''}\n`);
  }
  process.stdout.write(flags.dryRun ? `dry run: nothing removed; ${kept} run(s) kept\n` : `${removed} run(s) cleaned, ${kept} kept; ledgers stay in .acia/runs\n`);
  return EXIT.OK;
}

/** The run branch acia/<run> and its task branches acia-tasks/<run>/*, as they exist. */
async function runBranches(git: Git, repo: string, runId: string): Promise<string[]> {
  const r = await git.run(repo, ['for-each-ref', '--format=%(refname:short)', `refs/heads/acia/${runId}`, `refs/heads/acia-tasks/${runId}/`]);
  return r.stdout === '' ? [] : r.stdout.split('\n');
}
