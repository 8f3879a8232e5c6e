// The work behind `acia replay`.
import { AciaError } from '../core/errors.js';
import { forTerminal } from '../core/text/terminal.js';
import { loadConfig } from '../core/config/load.js';
import type { Clock } from '../core/acm/ids.js';
import { replayRun } from '../team/replay.js';
import { replayComposer } from '../app/create-deps.js';
import { readEntries, resolveRun } from './runs-action.js';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { bundleLedgerDir, readBundleManifest } from '../core/ledger/bundle.js';
import { looksLikeSpecBundle } from '../core/ledger/spec-bundle.js';
import { Config as ConfigSchema } from '../core/config/schema.js';

/** `target` is a run id in the repository at `dir`, or a bundle directory (`acia bundle`, `.acia/bundles/<run>`). */
/** `flags`: config values the run was started with when they are not the repository's (a fleet run's submit settings). */
export async function replayCommand(dir: string, target: string, json: boolean, flags: Record<string, unknown> = {}): Promise<number> {
  const bundle = existsSync(join(target, 'manifest.json')) ? await readBundleManifest(resolve(target)) : null;
  let repo: string;
  let runDir: string;
  let runId = target;
  if (bundle) {
    // A bundle replays on its own: its ledger and blobs, its recorded Context Packet; no repository needed.
    runId = bundle.runId;
    runDir = bundleLedgerDir(resolve(target), bundle);
    repo = resolve(target);
  } else if (existsSync(target) && (await looksLikeSpecBundle(resolve(target)))) {
    throw new AciaError(
      'USAGE',
      `${target} is an ACM replay bundle written by another implementation, not by acia: acia replays a run by running its own executor again over its hash-chained ledger and recorded responses, which this bundle does not have`,
      { hint: `check its layout, artifacts and entry digests with \`acia verify ${target}\`` },
    );
  } else {
    ({ repo, runDir } = await resolveRun(dir, runId));
  }
  const entries = await readEntries(runDir);
  const { config } = bundle ? { config: ConfigSchema.parse({}) } : loadConfig({ repo, env: process.env, flags });
  const frozen: Clock = { now: () => new Date(entries[0]?.ts ?? 0) };
  const report = await replayRun(
    // Each recorded session's deps: the replay profile (src/app/create-deps.ts), which touches nothing.
    { config, clock: frozen, compose: replayComposer },
    repo,
    runId,
    entries,
    runDir,
  );
  if (json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else if (report.identical) process.stdout.write(`replay of ${runId}: identical (${report.recordedEntries} recorded entries, ${report.replayedEntries} replayed)\n`);
  else {
    const d = report.divergence!;
    process.stdout.write(`replay of ${runId}: DIVERGED for ${forTerminal(d.actor)} at its entry ${d.index}: ${forTerminal(d.reason)}\n`);
    if (d.recorded) process.stdout.write(`  recorded seq ${d.recorded.seq}: ${d.recorded.type} ${JSON.stringify(d.recorded.data).slice(0, 300)}\n`);
    if (d.replayed) process.stdout.write(`  replayed:     ${d.replayed.type} ${JSON.stringify(d.replayed.data).slice(0, 300)}\n`);
    if (report.error) process.stdout.write(`  the replay stopped: ${forTerminal(report.error)}\n`);
  }
  return report.identical ? 0 : 1;
}
