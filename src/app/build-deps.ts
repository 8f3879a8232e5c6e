// The checks every front end makes before a run is continued or started: the run is anchored for this
// user, and the chosen model can be reached. (The deps themselves: create-deps.ts.)
import { existsSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { AciaError } from '../core/errors.js';
import type { Config } from '../core/config/schema.js';
import { guardAciaState } from '../core/contain/clone-guard.js';
import { requireRunDir } from '../core/contain/acia-state.js';
import { readAnchor } from '../core/ledger/anchor.js';
import { verifyRun, type VerifyCode } from '../core/ledger/verify.js';
import { parseChaosSpec } from '../core/llm/chaos-client.js';

/**
 * What stops a resume: a run this user's state does not anchor, or a ledger that no longer matches the
 * anchor. A torn tail (a crash mid-write) or a missing wiki page is what resume repairs, so those pass.
 */
const RESUME_BLOCKERS: ReadonlySet<VerifyCode> = new Set<VerifyCode>(['UNANCHORED', 'ANCHOR_MISMATCH', 'TRUNCATED', 'CHAIN_BROKEN', 'HASH_MISMATCH', 'SEQ_GAP', 'RUN_ID', 'PARSE', 'SCHEMA']);

/** Refuses a run whose ledger the user's state directory does not anchor, or no longer matches. */
export async function checkRunAnchored(env: NodeJS.ProcessEnv, runDir: string, runId: string): Promise<void> {
  const report = await verifyRun(runDir, { runId, anchor: readAnchor(env, runDir, runId) });
  // No complete entry: nothing can be taken from it (resume then says the run never started).
  if (report.entries === 0) return;
  const bad = report.problems.find((p) => RESUME_BLOCKERS.has(p.code));
  if (bad) {
    throw new AciaError('UNSAFE_REPO', `refusing to resume run ${runId}: ${bad.code} ${bad.message}`, {
      hint: `a run is resumed only as ACIA recorded it for you; see \`acia verify ${runId}\`, and start a new run instead`,
    });
  }
}

/** The checks `acia resume` makes before it reads anything from a run's ledger. */
export async function checkResumable(env: NodeJS.ProcessEnv, repo: string, runId: string): Promise<void> {
  const runDir = requireRunDir(repo, runId);
  await guardAciaState(repo);
  await checkRunAnchored(env, runDir, runId);
}

/** One clear line before any work starts when the chosen model cannot be reached. */
export function preflightModel(config: Config, env: NodeJS.ProcessEnv, override: boolean, cwd: string = process.cwd()): void {
  if (override) return;
  if (config.model.startsWith('scripted:') || config.model.startsWith('chaos:')) {
    // Otherwise a typo surfaces only as a failed run with a ledger, after the context is built.
    const file = resolvePath(cwd, config.model.startsWith('chaos:') ? parseChaosSpec(config.model.slice('chaos:'.length)).script : config.model.slice('scripted:'.length));
    if (!existsSync(file)) throw new AciaError('FILE_NOT_FOUND', `no such script file: ${file} (model ${config.model})`, { hint: 'the script format: docs/scripted-model.md' });
  }
  if (config.model.startsWith('anthropic:') && !env.ANTHROPIC_API_KEY) {
    throw new AciaError('LLM_AUTH', `${config.model} needs ANTHROPIC_API_KEY, which is not set`, {
      hint: 'export ANTHROPIC_API_KEY=..., or choose another model with --model openai:<id> | scripted:<file>, or try `acia demo` (offline)',
    });
  }
}
