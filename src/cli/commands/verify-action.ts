// The work of `acia verify`, loaded only when the command runs.
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { RunId } from '../../core/acm/ids.js';
import { AciaError } from '../../core/errors.js';
import { readBundleManifest, verifyBundle } from '../../core/ledger/bundle.js';
import { looksLikeSpecBundle, verifyForeignBundle } from '../../core/ledger/spec-bundle.js';
import { runDirOf } from '../../core/ledger/manifest.js';
import { readAnchor } from '../../core/ledger/anchor.js';
import { verifyAll, verifyRun, type RunVerification, type VerifyReport } from '../../core/ledger/verify.js';
import { EXIT } from '../../app/exit-codes.js';
import { repoOf } from '../runs-action.js';
import { forTerminal } from '../../core/text/terminal.js';

export async function verifyCommand(target: string | undefined, options: { repo: string; json?: boolean; db?: string | boolean }): Promise<number> {
  const report = options.db === undefined ? await buildReport(target, options.repo) : await (await import('../fleet-read.js')).verifyFleet(options.db, target);
  if (options.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else for (const run of report.runs) process.stdout.write(`${describe(run)}\n`);
  return report.ok ? EXIT.OK : EXIT.FAILED;
}

async function buildReport(target: string | undefined, repoDir: string): Promise<VerifyReport> {
  const anchorOf = (runDir: string, runId: string) => readAnchor(process.env, runDir, runId);
  if (target !== undefined && (await readBundleManifest(resolve(target)))) {
    const run = await verifyBundle(resolve(target));
    return { ok: run.ok, runs: [run] };
  }
  if (target !== undefined && (await looksLikeSpecBundle(resolve(target)))) {
    // Another implementation's bundle: acia says what it checked and that it cannot vouch for it.
    const run = await verifyForeignBundle(resolve(target));
    return { ok: false, runs: [run] };
  }
  // Run ids are looked up from any directory inside the repository, as git does.
  const repo = await repoOf(repoDir, true);
  if (target === undefined) return verifyAll(repo, anchorOf);
  if (!RunId.safeParse(target).success) throw new AciaError('USAGE', `${target} is neither a run id nor a bundle directory`);
  const runDir = runDirOf(repo, target);
  const isDir = await stat(runDir).then((s) => s.isDirectory(), () => false);
  if (!isDir) throw new AciaError('RUN_NOT_FOUND', `no run ${target} in ${repo} (and ${target} is not a bundle directory)`, { hint: 'run `acia verify` without an id to check every run' });
  const run = await verifyRun(runDir, { anchor: anchorOf(runDir, target) });
  return { ok: run.ok, runs: [run] };
}

/** Run ids are directory names a clone could choose: each line is shown with terminal controls stripped. */
function describe(run: RunVerification): string {
  return describeRaw(run).split('\n').map((line) => forTerminal(line)).join('\n');
}

function describeRaw(run: RunVerification): string {
  if (run.ok) {
    const head = run.head ? `head seq ${run.head.seq} ${run.head.hash.slice(0, 12)}` : 'empty';
    return `ok   ${run.runId}: ${run.entries} entries, ${head}`;
  }
  const first = run.problems[0]!;
  const where = first.seq === null ? '' : ` at seq ${first.seq}`;
  if (first.code === 'NOT_ACIA_BUNDLE') {
    // Every finding, one per line: there is no first bad seq to point at.
    return [`NOT VERIFIED ${run.runId}: ${first.message}`, ...run.problems.slice(1).map((p) => `  ${p.code} ${p.message}`)].join('\n');
  }
  const more = run.problems.length > 1 ? ` (+${run.problems.length - 1} more)` : '';
  return `FAIL ${run.runId}${where}: ${first.code} ${first.message}${more}`;
}
