// A task that added a dependency (`npm install x`, `yarn add x`, `pnpm add x`, `pip install x` in its worktree) commits
// the manifest and the lockfile or requirements file, never node_modules or the venv: every later worktree
// is laid out from the user's checkout, which lacks it. So once the run's branch has changed such a file,
// each later task's worktree gets the package manager's install (in the sandbox, reaching only the hosts
// the user allowed) before its agent starts: it adds what the branch declares to the worktree's own copy
// of node_modules or the venv, and the user's stays as it was. Without an allowed registry it cannot run,
// and the task stops with the line that shows why and what to do (environment-problem.ts).
//
// Whether to sync is decided from the ledger (the recorded merges), so a replay asks the same question.
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { TaskSpec } from '../core/acm/contracts.js';
import { dataOf } from '../core/ledger/entry.js';
import { packageManagerOf } from '../core/tools/test-command.js';
import type { RunContext } from './run-context.js';
import { runSetupCommand, type SetupResult } from './task-common.js';
import type { TaskWorktree } from './workspace.js';

/** npm's and Yarn's manifests, at the root or in a workspace package. */
const NODE_MANIFEST = /(^|\/)(package\.json|package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml)$/;
/** pip requirements files: requirements.txt, requirements-dev.txt, requirements/test.txt. */
const REQUIREMENTS = /(^|\/)(requirements[^/]*\.txt|requirements\/[^/]+\.txt)$/;

export const NPM_SYNC_COMMAND = 'npm install --no-audit --no-fund';
/** Yarn 1: exactly what the branch's yarn.lock says (it was written by the task's `yarn add`). */
/** pnpm: the branch's lockfile, into the task's copy of node_modules from a store of its own. */
export const PNPM_SYNC_COMMAND = 'pnpm install --frozen-lockfile';
export const YARN_SYNC_COMMAND = 'yarn install --frozen-lockfile --non-interactive';

/** Runs the sync in `wt` when the run's merged work changed a manifest it installs from; 'none' otherwise. */
export async function syncAddedDependencies(ctx: RunContext, spec: TaskSpec, attempt: number, wt: TaskWorktree): Promise<SetupResult> {
  // A requirements file the branch deleted again has nothing to install.
  const changed = [...new Set(dataOf(ctx.rec.ledger.entries(), 'MERGE').flatMap((m) => m.files))].filter((f) => !REQUIREMENTS.test(f) || existsSync(join(wt.path, f)));
  const venv = changed.some((f) => REQUIREMENTS.test(f)) ? (ctx.deps.tools.environment(ctx.repo).venv ?? null) : null;
  // Only a venv of the checkout: the task gets its own copy of that one (an outside VIRTUAL_ENV is read-only).
  const command = syncCommand(ctx.repo, changed, venv !== null && !isAbsolute(venv.path) ? venv.path : null);
  return command === null ? { kind: 'none' } : runSetupCommand(ctx, spec, attempt, wt, { command, id: 'deps' });
}

/** The install commands the changed files call for in `repo` (its venv at `venv`, relative), joined; null when none. */
export function syncCommand(repo: string, changed: readonly string[], venv: string | null): string | null {
  const steps: string[] = [];
  if (changed.some((f) => NODE_MANIFEST.test(f))) {
    const manager = nodeManager(repo);
    if (manager === 'npm') steps.push(NPM_SYNC_COMMAND);
    if (manager === 'yarn') steps.push(YARN_SYNC_COMMAND);
    if (manager === 'pnpm') steps.push(PNPM_SYNC_COMMAND);
  }
  const requirements = changed.filter((f) => REQUIREMENTS.test(f)).sort();
  if (requirements.length > 0 && venv !== null) steps.push(`${shellWord(venv)}/bin/python -m pip install --quiet ${requirements.map((r) => `-r ${shellWord(r)}`).join(' ')}`);
  return steps.length === 0 ? null : steps.join(' && ');
}

/** The checkout's node package manager when it keeps a node_modules ACIA can add to: npm, Yarn 1 or pnpm. */
function nodeManager(repo: string): 'npm' | 'yarn' | 'pnpm' | null {
  let pkg: Record<string, unknown>;
  try {
    pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
  const name = packageManagerOf(pkg, { has: (f) => existsSync(join(repo, f)), read: (f) => (existsSync(join(repo, f)) ? readFileSync(join(repo, f), 'utf8') : null) }).name;
  return name === 'npm' || name === 'yarn' || name === 'pnpm' ? name : null;
}

function shellWord(s: string): string {
  return /^[A-Za-z0-9_./@%+=:,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
