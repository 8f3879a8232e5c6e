// A task that added a dependency (`npm install x` in its worktree) commits package.json and the lockfile,
// not node_modules: every later worktree is laid out from the user's checkout, which lacks it. So once the
// run's branch has changed an npm manifest, each later task's worktree gets `npm install` (in the sandbox,
// reaching only the hosts the user allowed) before its agent starts: npm adds what the branch declares to
// the worktree's own node_modules, and the user's stays as it was. Without an allowed registry it cannot
// run, and the task stops with the line that shows why and what to do (environment-problem.ts).
//
// Whether to sync is decided from the ledger (the recorded merges), so a replay asks the same question.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskSpec } from '../core/acm/contracts.js';
import { dataOf } from '../core/ledger/entry.js';
import { packageManagerOf } from '../core/tools/test-command.js';
import type { RunContext } from './run-context.js';
import { runSetupCommand, type SetupResult } from './task-common.js';
import type { TaskWorktree } from './workspace.js';

/** npm's manifests, at the root or in a workspace package. */
const NPM_MANIFEST = /(^|\/)(package\.json|package-lock\.json|npm-shrinkwrap\.json)$/;

export const NPM_SYNC_COMMAND = 'npm install --no-audit --no-fund';

/** Runs the sync in `wt` when the run's merged work changed an npm manifest; 'none' otherwise. */
export async function syncAddedDependencies(ctx: RunContext, spec: TaskSpec, attempt: number, wt: TaskWorktree): Promise<SetupResult> {
  if (!usesNpm(ctx.repo)) return { kind: 'none' };
  const changed = dataOf(ctx.rec.ledger.entries(), 'MERGE').some((m) => m.files.some((f) => NPM_MANIFEST.test(f)));
  if (!changed) return { kind: 'none' };
  return runSetupCommand(ctx, spec, attempt, wt, { command: NPM_SYNC_COMMAND, id: 'deps' });
}

/** The user's checkout installs with npm (no other package manager named or locked). */
function usesNpm(repo: string): boolean {
  let pkg: Record<string, unknown>;
  try {
    pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as Record<string, unknown>;
  } catch {
    return false;
  }
  return packageManagerOf(pkg, { has: (f) => existsSync(join(repo, f)), read: () => null }).name === 'npm';
}
